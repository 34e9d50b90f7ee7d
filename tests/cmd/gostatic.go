// gostatic.go - a statically linked Go program for the tests of xom run
// with static programs (tests/cmd/guest-static.sh):
//
//	gostatic hello       goroutines on threads of their own add up numbers
//	gostatic readcode    reads a byte of its own code
//	gostatic sleep N     prints its process ID, then sleeps N seconds
//	gostatic exit N      exits with status N
package main

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"time"
	"unsafe"
)

// hello spreads the work over locked OS threads, so that the run has
// more than one thread whatever GOMAXPROCS is.
func hello() {
	var wg sync.WaitGroup
	sums := make([]int, 4)
	for i := range sums {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			runtime.LockOSThread()
			for j := 0; j <= 1000*(i+1); j++ {
				sums[i] += j
			}
		}(i)
	}
	wg.Wait()
	for i, s := range sums {
		fmt.Printf("goroutine %d sum %d\n", i, s)
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gostatic hello | readcode | sleep N | exit N")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "hello":
		hello()
	case "readcode":
		p := reflect.ValueOf(hello).Pointer()
		b := *(*byte)(unsafe.Pointer(p))
		fmt.Printf("read own code: %02x\n", b)
	case "sleep":
		n, _ := strconv.Atoi(os.Args[2])
		fmt.Println(os.Getpid())
		time.Sleep(time.Duration(n) * time.Second)
	case "exit":
		n, _ := strconv.Atoi(os.Args[2])
		os.Exit(n)
	}
}

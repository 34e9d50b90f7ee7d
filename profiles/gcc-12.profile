# xom profile: the code pages these programs read
# Produced in the emulated-PKU guest by tests/learn/gcc-12-workload.sh, which
# ran the xom learn commands below (see profiles/README.md).
# learned by: xom learn -- gcc -O2 hello.c -o prog
# learned by: xom learn -- gcc -O2 big.c -o prog
# learned by: xom learn -- gcc -O0 -g hello.c -o prog
# learned by: xom learn -- gcc -O0 -g big.c -o prog
# learned by: xom learn -- gcc -O3 -g hello.c -o prog
# learned by: xom learn -- gcc -O3 -g big.c -o prog
# learned by: xom learn -- gcc -Os hello.c -o prog
# learned by: xom learn -- gcc -Os big.c -o prog
# learned by: xom learn -- gcc -O2 -fno-pie -no-pie hello.c -o prog
# learned by: xom learn -- gcc -O2 -fno-pie -no-pie big.c -o prog
# learned by: xom learn -- gcc -O2 -fPIC -shared hello.c -o prog
# learned by: xom learn -- gcc -O2 -fPIC -shared big.c -o prog
# learned by: xom learn --door audit -- gcc -O2 hello.c -o prog
# learned by: xom learn --door audit -- gcc -O2 big.c -o prog
# learned by: xom learn --door audit -- gcc -O0 -g hello.c -o prog
# learned by: xom learn --door audit -- gcc -O0 -g big.c -o prog
# learned by: xom learn --door audit -- gcc -O3 -g hello.c -o prog
# learned by: xom learn --door audit -- gcc -O3 -g big.c -o prog
# learned by: xom learn --door audit -- gcc -Os hello.c -o prog
# learned by: xom learn --door audit -- gcc -Os big.c -o prog
# learned by: xom learn --door audit -- gcc -O2 -fno-pie -no-pie hello.c -o prog
# learned by: xom learn --door audit -- gcc -O2 -fno-pie -no-pie big.c -o prog
# learned by: xom learn --door audit -- gcc -O2 -fPIC -shared hello.c -o prog
# learned by: xom learn --door audit -- gcc -O2 -fPIC -shared big.c -o prog
program 4178c06f7ed4d0729fd9fa20d167096eb12df370 /usr/lib/gcc/x86_64-linux-gnu/12/cc1
4178c06f7ed4d0729fd9fa20d167096eb12df370 0xe93000 /usr/lib/gcc/x86_64-linux-gnu/12/cc1 # read of /usr/lib/gcc/x86_64-linux-gnu/12/cc1+0xe93750, in _Z21output_section_asm_opPKc by /lib/x86_64-linux-gnu/libc.so.6+0x155927, no symbol

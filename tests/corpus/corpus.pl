# perl's core modules in the corpus (tests/corpus/vm-corpus.sh): Digest::SHA,
# Data::Dumper, Storable, List::Util, Scalar::Util and POSIX, most of them
# XS libraries. Its output, without xom, is the right answer.
use strict; use warnings;
use Digest::SHA qw(sha256_hex hmac_sha1_hex);
use Data::Dumper; use List::Util qw(sum max first reduce shuffle);
use Storable qw(freeze thaw dclone); use POSIX qw(floor ceil fmod strftime);
use Scalar::Util qw(blessed reftype looks_like_number);
$Data::Dumper::Sortkeys = 1; $Data::Dumper::Indent = 1;
my $d = { n => [1..10], s => "xom", h => { a => 1, b => [2, 3] } };
print sha256_hex("abc" x 1000), "\n", hmac_sha1_hex("data", "key"), "\n";
print Dumper($d);
my $c = thaw(freeze($d)); print Dumper(dclone($c)) eq Dumper($d) ? "storable ok\n" : "storable bad\n";
print sum(1..100), " ", max(3, 9, 2), " ", first { $_ > 3 } (1..9); print "\n";
print reduce { $a * $b } 1..10; print "\n";
print floor(-2.5), " ", ceil(2.1), " ", fmod(10, 3), " ", strftime("%Y-%m-%d", gmtime(1e9)), "\n";
print join(",", map { sprintf "%.3f", sin($_) } 1..5), "\n";
my $obj = bless {}, 'Xom::Thing';
print blessed($obj), " ", reftype($obj), " ", (looks_like_number("1e3") ? 1 : 0), (looks_like_number("x") ? 1 : 0), "\n";

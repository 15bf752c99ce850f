# dump.pl - prints a coreutils sort test script's @Tests as JSON, for gen.py.
#
# usage: perl dump.pl tests/sort/sort.pl > sort.json
# The script is run with stand-ins for what it takes from coreutils' test
# framework: getlimits (64-bit values), triple_test (the cases as written) and
# run_tests (which prints the cases instead of running them).
use strict;
use JSON::PP;

sub getlimits
{
  return { UINTMAX_OFLOW => '18446744073709551616',
           SIZE_OFLOW => '18446744073709551616' };
}
sub triple_test { return @{$_[0]}; }
sub run_tests
{
  my ($program_name, $prog, $tests) = @_;
  print JSON::PP->new->canonical->encode($tests);
  return 0;
}

my $src = do { local $/; open my $fh, '<', $ARGV[0] or die "$ARGV[0]: $!"; <$fh> };
$src =~ s/^exit \$fail;//m;
eval $src;
die $@ if $@;

#!/usr/bin/perl
# Prints the types of ABI dumps that are not part of the ABI, one a line, for
# abi-compliance-checker -skip-types: the structs behind ocal's opaque handles (struct
# ocal_context_s and the like, whose layout programs never see: they only hold pointers) and
# internal types (ocal__*). abi-dumper records them because the handles point to them.
use strict;
use warnings;
my %seen;
for my $file (@ARGV) {
  open(my $f, '<', $file) or die "abi/skip-types.pl: $file: $!\n";
  while (<$f>) {
    while (/'Name' => '((?:struct |enum |union )?ocal(?:__\w+|_\w+_s))'/g) {
      print "$1\n" unless $seen{$1}++;
    }
  }
}

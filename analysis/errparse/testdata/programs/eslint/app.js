const unusedThing = 42;

function check(a) {
  if (a == 1) {
    return undefinedHelper(a);
  }
  return a;
}

check(1);

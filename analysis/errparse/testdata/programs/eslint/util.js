function main() {
  const leftover = "x";
  return missingGlobal;
}

main();

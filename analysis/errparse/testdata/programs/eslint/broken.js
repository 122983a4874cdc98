function broken( {
  return 1;
}

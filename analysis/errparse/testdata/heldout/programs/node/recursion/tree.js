function depth(node) {
  if (node === null) {
    return 0;
  }
  return 1 + Math.max(...node.children.map(depth));
}

const root = { children: [] };
root.children.push(root);
console.log(depth(root));

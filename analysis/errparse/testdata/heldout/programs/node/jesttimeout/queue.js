function drain(queue) {
  return new Promise((resolve) => {
    if (queue.length === 0) {
      resolve();
    }
  });
}

module.exports = { drain };

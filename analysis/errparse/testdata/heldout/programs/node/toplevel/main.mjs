class Queue {
  constructor(limit) {
    this.items = new Array(limit).fill(null);
  }
}

const sizes = await Promise.resolve([2, -1]);
const queues = sizes.map((n) => new Queue(n));
console.log(queues.length);

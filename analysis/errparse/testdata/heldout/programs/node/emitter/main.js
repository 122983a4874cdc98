const { EventEmitter } = require("events");

const disk = new EventEmitter();
setTimeout(() => {
  disk.emit("error", new Error("disk full"));
}, 0);

const { loadConfig } = require("./lib");

function start() {
  return loadConfig();
}

start();

const fs = require("fs");

function readSettings(path) {
  return JSON.parse(fs.readFileSync(path, "utf8"));
}

console.log(readSettings("missing-settings.json"));

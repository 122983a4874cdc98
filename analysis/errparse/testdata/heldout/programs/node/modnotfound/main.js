const path = require("path");
const settings = require("./setings");

console.log(path.join(settings.root, "x"));

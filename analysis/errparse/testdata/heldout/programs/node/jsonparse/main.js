const raw = "{'name': 'app'}";

function readConfig(text) {
  return JSON.parse(text);
}

console.log(readConfig(raw).name);

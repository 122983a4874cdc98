const config = { name: "app" };

function loadConfig() {
  return config.load();
}

module.exports = { loadConfig };

const config = { name: "app" };

function loadConfig() {
  return config.load();
}

loadConfig();

const { Poller } = require("./lib/poller");

new Poller(() => "ok", 10).start();

class Poller {
  constructor(fetch, interval) {
    this.fetch = fetch;
    this.interval = interval;
  }

  start() {
    setTimeout(function tick() {
      const res = this.fetch();
      console.log(res);
    }, this.interval);
  }
}

module.exports = { Poller };

const settings = require('./settings');

console.log(settings.port);

module.exports = {
  port: 80,
  host: 'localhost'
  timeout: 30,
};

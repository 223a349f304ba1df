// Preloaded into Node for the tests: a server that listens on a bare port (as
// server-everything's streamable HTTP transport does, on every interface) listens on the
// loopback address only.
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  if (typeof port === 'number' || (typeof port === 'string' && /^\d+$/.test(port))) {
    args.splice(1, 0, '127.0.0.1');
  }
  return listen.apply(this, args);
};

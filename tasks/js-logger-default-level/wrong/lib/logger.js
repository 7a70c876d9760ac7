'use strict';
const { LEVELS, rank } = require('./levels');

const DEFAULTS = { level: 'debug', write: (line) => console.log(line) };

function createLogger(options = {}) {
  const settings = { ...DEFAULTS, ...options };
  if (rank(settings.level) === -1) throw new Error(`unknown level ${settings.level}`);
  const logger = { level: settings.level };
  for (const level of LEVELS) {
    logger[level] = (message) => {
      if (rank(level) > rank(settings.level)) settings.write(`${level.toUpperCase()} ${message}`);
    };
  }
  return logger;
}

module.exports = { createLogger };

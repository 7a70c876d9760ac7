'use strict';
const LEVELS = ['debug', 'info', 'warn', 'error'];
module.exports = { LEVELS, rank: (level) => LEVELS.indexOf(level) };

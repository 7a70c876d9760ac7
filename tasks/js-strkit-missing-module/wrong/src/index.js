'use strict';
const { truncate } = require('./truncate');

module.exports = { truncate };

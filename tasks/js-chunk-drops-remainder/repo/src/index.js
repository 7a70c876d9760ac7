'use strict';
module.exports = { ...require('./chunk'), ...require('./zip') };

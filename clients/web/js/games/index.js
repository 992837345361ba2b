// Every game the page draws, one line each: the view modules, by the game's name. A new
// game's view (games/NAME.js: `render`, `TITLE`, and the `log` words of its own) is added
// here and nowhere else in the page.

export * as qwinto from './qwinto.js';
export * as qwirkle from './qwirkle.js';
export * as qwixx from './qwixx.js';
export * as yamb from './yamb.js';

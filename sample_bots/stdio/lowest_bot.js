// A bot over stdin/stdout in plain Node.js (no packages): it calls the lowest call allowed and plays its
// lowest legal card, exactly as lowest_bot.py does. Run it as: node sample_bots/stdio/lowest_bot.js
const readline = require("readline");

const RANKS = "23456789TJQKA";
const lowest = (cards) => cards.reduce((low, card) => (RANKS.indexOf(card[0]) < RANKS.indexOf(low[0]) ? card : low));

// One request per line; the arena closes stdin when the game is over, which ends the loop and the bot.
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const request = JSON.parse(line);
  let answer;
  if (request.type === "call") answer = { call: request.legal_calls[0] };
  else if (request.type === "play") answer = { card: lowest(request.legal_cards) };
  else return; // "game_over": nothing to answer
  process.stdout.write(JSON.stringify(answer) + "\n");
});

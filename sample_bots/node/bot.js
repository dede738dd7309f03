#!/usr/bin/env node
// A sample Callbreak bot in JavaScript for callbreak-arena.
//
// It reads callbreak.proto (the arena's protocol/callbreak.proto, copied beside it) at run time (no
// generated code), dials the arena, says hello and answers every request on the one gRPC stream:
//   - a call: its aces and its top trumps (K, Q), as many tricks as it thinks it will surely win;
//   - a card: while its call is not made, the lowest legal card that beats the trick so far;
//     otherwise (or if none does) its lowest legal card.
// The bot is stateless: every request carries the whole view of the seat, so it ignores events.
//
//   export CALLBREAK_TOKEN=YOUR-TOKEN
//   node bot.js --arena 127.0.0.1:50051            (or --arena unix:/path/to/socket)
//
// Exit status: 0 when the tournament is over (or the arena that launched the bot has ended), 1 when
// the arena refuses the bot for good, 2 for a bad command line or a missing file of the bot's folder
// (its libraries, its callbreak.proto). Anything else: reconnect.
//
// Copy the whole folder, not bot.js alone: the bot reads callbreak.proto, package.json and node_modules
// from its own folder, and a sandboxed bot sees nothing outside that folder.

'use strict';

const fs = require('fs');
const path = require('path');
const { parseArgs } = require('util');

// The libraries, from node_modules in the bot's folder: said in words when they are not there.
let grpc;
let protoLoader;
try {
  grpc = require('@grpc/grpc-js');
  protoLoader = require('@grpc/proto-loader');
} catch (err) {
  if (err.code !== 'MODULE_NOT_FOUND') throw err;
  console.error(`[node-bot] cannot load the bot's libraries (${err.message.split('\n')[0]}): run \`npm ci\` ` +
                `in ${__dirname}, and copy its node_modules folder with the bot wherever the bot goes`);
  process.exit(2);
}

const VERSION = require('./package.json').version;

// ---------------------------------------------------------------------------------------------
// The command line: the flags of the project's Python bot kit (all but --option), and --proto.
// ---------------------------------------------------------------------------------------------
const HELP = `usage: node bot.js --arena HOST:PORT [--token T] [--name NAME] [--seed N]
                   [--tls-ca FILE [--tls-cert FILE --tls-key FILE]] [--once] [--max-backoff S]
                   [--proto FILE]
The token comes from the environment variable CALLBREAK_TOKEN unless --token is given
(a command line is visible to every user of the machine). --arena also takes unix:/path.
--proto is the protocol file, by default callbreak.proto in the bot's own folder.`;

let LABEL = '[node-bot]'; // starts each line on stderr; the bot's --name once it is known
let args;
try {
  args = parseArgs({
    options: {
      arena: { type: 'string' },
      token: { type: 'string', default: '' },
      name: { type: 'string', default: '' }, // the organiser's name for the bot; '' sends no name
      seed: { type: 'string', default: '0' }, // accepted like the kit's; this bot plays no dice
      'tls-ca': { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      once: { type: 'boolean', default: false }, // stop instead of reconnecting
      'max-backoff': { type: 'string', default: '10' }, // seconds, longest pause between attempts
      proto: { type: 'string', default: path.join(__dirname, 'callbreak.proto') }, // the copy beside bot.js
      help: { type: 'boolean', short: 'h', default: false },
    },
  }).values;
} catch (err) {
  stop(2, `${err.message}\n${HELP}`);
}
// A token copied with a newline or spaces around it is the token alone.
args.token = (args.token || process.env.CALLBREAK_TOKEN || '').trim();
if (args.help) {
  console.log(HELP);
  process.exit(0);
}
if (!args.arena) stop(2, `--arena is required\n${HELP}`);
const MAX_BACKOFF = Number(args['max-backoff']);
if (!(MAX_BACKOFF > 0)) stop(2, '--max-backoff must be a number of seconds above 0');

if (args.name) LABEL = `[${args.name}]`;

// One line on stderr for every connection and every failure (stdout may go nowhere).
function say(text) {
  console.error(`${LABEL} ${text}`);
}

// Says why, and ends the process with exit status `status`.
function stop(status, text) {
  say(text);
  process.exit(status);
}

// ---------------------------------------------------------------------------------------------
// The protocol, loaded from the .proto file.
// ---------------------------------------------------------------------------------------------
if (!fs.existsSync(args.proto)) {
  stop(2, `cannot find the protocol file ${args.proto}: bot.js reads callbreak.proto from its own folder (or the file --proto names). ` +
          'Copy the whole sample_bots/node folder (bot.js with its callbreak.proto, package.json and ' +
          'node_modules), not bot.js alone; or copy protocol/callbreak.proto of callbreak-arena next to ' +
          'bot.js, or give its path with --proto FILE');
}
let definition;
try {
  definition = protoLoader.loadSync(args.proto, {
    keepCase: true, // field names exactly as in the .proto: request_id, legal_cards, ...
    longs: String, // uint64 request_id arrives as a decimal string: echo it back unchanged
    enums: String, // enum values arrive as their names, e.g. 'SUIT_SPADES', 'NOTICE_KIND_FLOOD'
    defaults: true, // unset fields read as 0, '' or [] (proto3 has no "missing" numbers)
    oneofs: true, // msg.kind names the field of the oneof that is set, e.g. 'play_request'
  });
} catch (err) {
  stop(2, `cannot read the protocol file ${args.proto} (${err.message}): replace it with a fresh copy of ` +
          "callbreak-arena's protocol/callbreak.proto");
}
const { Arena } = grpc.loadPackageDefinition(definition).callbreak.v1;

// ---------------------------------------------------------------------------------------------
// The game: cards are two characters, rank then suit ('TH' is the ten of hearts).
// ---------------------------------------------------------------------------------------------
const RANKS = '23456789TJQKA'; // low to high
const SUIT_LETTER = { SUIT_SPADES: 'S', SUIT_HEARTS: 'H', SUIT_DIAMONDS: 'D', SUIT_CLUBS: 'C' };

const rank = (card) => RANKS.indexOf(card[0]);

// True when `card` takes the trick from `best`, the card winning it so far.
function beats(card, best, trump) {
  if (card[1] === best[1]) return rank(card) > rank(best);
  return card[1] === trump; // a trump beats any other suit; any other off-suit card loses
}

// Lowest first: non-trumps before trumps, then by rank, then by suit letter (so that the choice
// never depends on the order of legal_cards, which carries no meaning).
function lowestFirst(cards, trump) {
  const isTrump = (card) => (card[1] === trump ? 1 : 0);
  return [...cards].sort((a, b) => isTrump(a) - isTrump(b) || rank(a) - rank(b) || a[1].localeCompare(b[1]));
}

function chooseCall(request) {
  const { hand, trump } = request.view;
  const t = SUIT_LETTER[trump];
  const sure = hand.filter((c) => c[0] === 'A' || (c[1] === t && 'KQ'.includes(c[0]))).length;
  const legal = request.legal_calls; // in increasing order, never empty
  return Math.min(Math.max(sure, legal[0]), legal[legal.length - 1]);
}

function chooseCard(request) {
  const view = request.view;
  const trump = SUIT_LETTER[view.trump];
  const legal = lowestFirst(request.legal_cards, trump); // never empty
  // The cards of the trick so far, in play order, the leader's first. (A message field that is not
  // on the wire reads as null, even with `defaults`: guard it.)
  const trick = view.current_trick ? view.current_trick.cards : [];
  const myCall = view.calls.find((c) => c.seat === view.seat);
  const callMade = view.tricks_won[view.seat] >= (myCall ? myCall.value : 0);
  if (trick.length === 0 || callMade) return legal[0];
  const best = trick.reduce((win, card) => (beats(card, win, trump) ? card : win));
  return legal.find((card) => beats(card, best, trump)) || legal[0];
}

// ---------------------------------------------------------------------------------------------
// The connection.
// ---------------------------------------------------------------------------------------------
function credentials() {
  if (!args['tls-ca']) return grpc.credentials.createInsecure();
  try {
    const read = (file) => (file ? fs.readFileSync(file) : null);
    return grpc.credentials.createSsl(read(args['tls-ca']), read(args['tls-key']), read(args['tls-cert']));
  } catch (err) {
    return stop(2, `bad TLS files: ${err.message}`);
  }
}

const CHANNEL_OPTIONS = {
  'grpc.keepalive_time_ms': 30000, // ping an idle stream every 30 s (the arena allows one every 10 s)
  'grpc.keepalive_permit_without_calls': 1,
};

// One session: hello, then answer requests until the stream ends. Resolves to how it ended.
function playSession(creds) {
  return new Promise((resolve) => {
    const client = new Arena(args.arena, creds, CHANNEL_OPTIONS);
    const stream = client.Connect();
    let welcomed = false;
    let takesBotErrors = false; // the arena reads a BotError instead of an answer (Welcome.takes_bot_errors)
    let quiet = false; // true once a notice says the stream ends: stop writing

    function answer(message) {
      if (!quiet) stream.write(message);
    }

    // A bug in a decision: said on stderr, and told to the arena at once (it records a crash and plays that
    // one decision for the bot); an older arena is left to its deadline.
    function failed(requestId, err) {
      say(`error: ${err.stack || err}`);
      if (!takesBotErrors) return;
      const frame = String(err.stack || '').split('\n').find((line) => line.includes(__filename)) || '';
      const place = frame.match(/:(\d+):\d+\)?$/);
      answer({
        error: {
          request_id: requestId, error_type: (err && err.name) || 'Error', message: String((err && err.message) || err),
          file: place ? path.basename(__filename) : '', line: place ? Number(place[1]) : 0,
        },
      });
    }

    stream.on('data', (msg) => {
      try {
        switch (msg.kind) {
          case 'welcome':
            welcomed = true;
            takesBotErrors = Boolean(msg.welcome.takes_bot_errors);
            say(`connected to the arena at ${args.arena} (session ${msg.welcome.session_id}, ` +
                `up to ${msg.welcome.max_tables} tables at once)`);
            break;
          case 'refusal': // the status that ends the stream says the same; see 'status' below
            say(`refused: ${msg.refusal.reason}: ${msg.refusal.detail}`);
            break;
          case 'call_request': {
            const r = msg.call_request;
            try {
              answer({ call: { request_id: r.request_id, call: chooseCall(r) } });
            } catch (err) {
              failed(r.request_id, err);
            }
            break;
          }
          case 'play_request': {
            const r = msg.play_request;
            try {
              answer({ play: { request_id: r.request_id, card: chooseCard(r) } });
            } catch (err) {
              failed(r.request_id, err);
            }
            break;
          }
          case 'notice': // a mistake or a fallback: for the log, never answered
            say(`notice ${msg.notice.kind} (table ${msg.notice.table_id || '-'}): ${msg.notice.detail}`);
            if (['NOTICE_KIND_DISQUALIFIED', 'NOTICE_KIND_FLOOD'].includes(msg.notice.kind)) quiet = true;
            break;
          case 'event': // sent only when Hello.events is true, which this stateless bot leaves false
            break;
          default: // a kind newer than this bot: ignore it
            break;
        }
      } catch (err) {
        say(`error: ${err.stack || err}`);
      }
    });
    stream.on('error', () => {}); // every end also comes as a 'status', handled below
    stream.on('status', (status) => {
      client.close();
      resolve({ welcomed, code: status.code, details: status.details });
    });

    stream.write({
      hello: { bot_name: args.name, bot_version: VERSION, token: args.token, protocol_version: 1, events: false },
    });
  });
}

// Statuses that a retry cannot mend (a bad token, disqualified, withdrawn, unsupported protocol).
const FINAL = new Set([
  grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED,
  grpc.status.FAILED_PRECONDITION, grpc.status.INVALID_ARGUMENT,
]);
const statusName = (code) => Object.keys(grpc.status).find((k) => grpc.status[k] === code) || String(code);
const sleep = (seconds) => new Promise((done) => setTimeout(done, seconds * 1000));

async function main() {
  // An arena that launched this bot holds its stdin open while it runs: end of file means it ended.
  if (process.env.CALLBREAK_LAUNCHED === '1') {
    process.stdin.on('data', () => {}); // discard what comes
    process.stdin.on('end', () => stop(0, 'the arena that launched this bot has ended; stopping'));
    process.stdin.on('error', () => stop(0, 'the arena that launched this bot has ended; stopping'));
  }
  process.on('SIGTERM', () => stop(0, 'stopped (SIGTERM)'));

  const creds = credentials();
  let backoff = 0.5;
  for (;;) {
    const end = await playSession(creds);
    if (end.welcomed) backoff = 0.5;
    if (end.code === grpc.status.OK) stop(0, 'the arena ended the stream: the tournament is over; stopping');
    if (FINAL.has(end.code)) {
      stop(1, `the arena ended the session with ${statusName(end.code)}: ${end.details}; stopping`);
    }
    const what = end.welcomed
      ? `connection to the arena lost (${statusName(end.code)}: ${end.details})`
      : `cannot reach the arena at ${args.arena} (${statusName(end.code)}: ${end.details})`;
    if (args.once) stop(1, `${what}; stopping (--once)`);
    say(`${what}; retrying in ${backoff} s`);
    await sleep(backoff);
    backoff = Math.min(MAX_BACKOFF, backoff * 2);
  }
}

main();

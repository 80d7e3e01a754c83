// trace_devtools.js FILE ENGINES: Chrome DevTools' own trace parser (SDK.TracingModel, from the
// npm package devtools-timeline-model) loads the JSON trace FILE; then every slice, instant and
// counter of the file is in its model, and each engine's thread (process "engines") has state
// slices that follow each other without gap or overlap from its first to a stop common to all
// engines. Exit 0, or 1 with the reason on stderr.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

function fail(msg) {
  console.error('trace_devtools: ' + msg);
  process.exit(1);
}

const [file, enginesText] = process.argv.slice(2);
const engines = Number(enginesText);
const events = JSON.parse(fs.readFileSync(file, 'utf8'));

// The package runs DevTools' front-end sources in a V8 context of their own; only its tracing
// model is needed here (its timeline model wants a browser's events).
const pkg = path.dirname(require.resolve('devtools-timeline-model/package.json'));
const ctx = vm.createContext({require, global, console, __dirname: pkg});
new vm.Script(fs.readFileSync(path.join(pkg, 'lib/timeline-model.js'), 'utf8')).runInContext(ctx);
const model = vm.runInContext(`(function(events) {
  const m = new SDK.TracingModel(new Bindings.TempFileBackingStorage('tracing'));
  m.setEventsForTest(events);
  return m;
})`, ctx)(events);

const inFile = events.filter(e => e.ph !== 'M').length;
let inModel = 0;
let enginesProcess = null;
for (const p of model.sortedProcesses()) {
  for (const t of p.sortedThreads()) inModel += t.events().filter(e => e.phase !== 'M').length;
  if (p.name() === 'engines') enginesProcess = p;
}
if (inModel !== inFile)
  fail(`${file}: ${inFile} events in the file, ${inModel} in DevTools' model`);
if (!enginesProcess) fail(`${file}: no process named "engines" in DevTools' model`);
const ends = new Set();
for (let i = 0; i < engines; i++) {
  const t = enginesProcess.threadById(i);
  if (t.name() !== `engine ${i}`) fail(`${file}: thread ${i} is named "${t.name()}"`);
  const states = t.events().filter(e => e.categoriesString === 'state');
  if (states.length === 0) fail(`${file}: engine ${i} has no state slices`);
  // DevTools' times are ms; the file's are us with ns precision.
  const ns = x => Math.round(x * 1e6);
  for (let k = 1; k < states.length; k++)
    if (ns(states[k].startTime) !== ns(states[k - 1].endTime))
      fail(`${file}: engine ${i}: ${states[k - 1].name} ends at ${states[k - 1].endTime} ms, ` +
           `${states[k].name} starts at ${states[k].startTime} ms`);
  ends.add(ns(states[states.length - 1].endTime));
}
if (ends.size !== 1) fail(`${file}: the engines stop at different times`);
console.log(`trace_devtools: ${file}: ${inModel} events in DevTools' model, ` +
            `${engines} engine tracks`);

#!/usr/bin/env node
import { runCli } from './program.js';

const code = await runCli(process.argv.slice(2));
// A failure exits now (nothing left to finish); on success the process ends by
// itself, or keeps serving for `berth run` and `berth example-plugin`.
if (code === 0) process.exitCode = 0;
else process.exit(code);

// Regenerates docs/errors.md from ERROR_CODES (run after `npm run build`).
import { writeFileSync } from 'node:fs';
import { ERROR_CODES } from '../dist/src/common/errors.js';

const rows = Object.entries(ERROR_CODES).map(([code, text]) => `| \`${code}\` | ${text} |`);
const doc = `# berth error codes

Every error berth reports carries one of these stable codes (HTTP API: \`{"error":{"code","message"}}\`;
library: \`BerthError.code\`). This file is generated from \`src/common/errors.ts\` by
\`node scripts/gen-error-docs.mjs\`; a test fails if the two disagree.

| code | meaning |
| --- | --- |
${rows.join('\n')}
`;
writeFileSync(new URL('../docs/errors.md', import.meta.url), doc);
console.log(`docs/errors.md: ${rows.length} codes`);

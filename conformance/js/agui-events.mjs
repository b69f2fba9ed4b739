// Checks AG-UI encoder output the demo model cannot produce (written by
// the Go driver from scripted agent events) with the real client: every
// event must pass EventSchema from @ag-ui/core/schemas with no unknown
// keys, and the stream verifyEvents; a stream for a pre-1.0 client must
// also pass the 0.0.59 client's verifyEvents.
//
//   node agui-events.mjs <streams.json>    [{name, stream, legacy, last}]
//
// last is what the final event must contain (a subset match).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { from, lastValueFrom, toArray } from 'rxjs';
import * as current from '@ag-ui/client';
import * as legacyClient from '@ag-ui/client-legacy';
import { EventSchema } from '@ag-ui/core/schemas';

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
let failed = 0;
for (const { name, stream, legacy, last } of cases) {
  try {
    const events = [];
    for (const frame of stream.split('\n\n')) {
      if (frame === '') continue;
      const raw = frame.slice('data: '.length);
      const event = JSON.parse(raw);
      const parsed = EventSchema.safeParse(event);
      if (!parsed.success) throw new Error(`EventSchema rejects ${raw}: ${parsed.error}`);
      assert.equal(Object.keys(parsed.data).length, Object.keys(event).length, 'no unknown keys: ' + raw);
      events.push(event);
    }
    await lastValueFrom(from(events).pipe(current.verifyEvents(false), toArray()));
    if (legacy) await lastValueFrom(from(events).pipe(legacyClient.verifyEvents(false), toArray()));
    const end = events.at(-1);
    for (const [k, v] of Object.entries(last)) assert.deepEqual(end[k], v, `last event's ${k}`);
    console.log(`ok ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e?.message ?? e}`);
  }
}
process.exit(failed ? 1 : 0);

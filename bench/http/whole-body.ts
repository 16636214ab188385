/**
 * What the benchmarks' do-nothing servers (bare-uws.ts, stub.ts) do with a
 * request: read its body to the last chunk, as any real handler must, and
 * then answer in one corked write, unless the client has gone.
 */
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';

export function answerWhenBodyEnds(res: HttpResponse, answer: () => void): void {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((_chunk, isLast) => {
    if (isLast && !aborted) res.cork(answer);
  });
}

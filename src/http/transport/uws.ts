/**
 * The only module that imports uWebSockets.js, so swapping the package is
 * one line. The republished package silently falls back to a slow pure-JS
 * implementation when its native binary does not load; that would quietly
 * break every performance promise, so it is refused here.
 */
import { createRequire } from 'node:module';
import type * as UwsTypes from '@trufflesuite/uws-js-unofficial';

const require = createRequire(import.meta.url);
const PACKAGE = '@trufflesuite/uws-js-unofficial';

function loadNative(): typeof UwsTypes {
  // The package prints its own warning before falling back; keep it quiet
  // and give one clear message instead.
  const warn = console.warn;
  console.warn = () => {};
  let uws: typeof UwsTypes;
  try {
    uws = require(PACKAGE) as typeof UwsTypes;
  } finally {
    console.warn = warn;
  }
  // Only the native binding exports the compressor constants and H3App.
  const native = uws as unknown as Record<string, unknown>;
  if (typeof native['H3App'] !== 'function' || native['SHARED_COMPRESSOR'] === undefined) {
    throw new Error(
      `uWebSockets.js native binary did not load (package ${PACKAGE}, Node ABI ${process.versions.modules}, ` +
        `${process.platform}-${process.arch}); refusing to start on the slow JavaScript fallback. ` +
        'Use Node 20 on Linux x64/arm64, macOS or Windows x64, and do not set UWS_USE_FALLBACK.',
    );
  }
  // uWS writes `uWebSockets: 20` into every response unless its loop is
  // "silent"; `_cfg('silent')` is the binding's switch for that (the header
  // tells an anonymous client which server and version to aim at). The
  // hostile tests check that the header is gone.
  const cfg = native['_cfg'];
  if (typeof cfg !== 'function') throw new Error(`uWebSockets.js package ${PACKAGE} has no _cfg('silent'): it would announce its name and version in every response.`);
  (cfg as (key: string) => void)('silent');
  return uws;
}

export const uws = loadNative();
export type HttpResponse = UwsTypes.HttpResponse;
export type HttpRequest = UwsTypes.HttpRequest;
/** The native App also has close(), which drops every connection; the bundled types omit it. */
export type TemplatedApp = UwsTypes.TemplatedApp & { close(): void };

export function createApp(): TemplatedApp {
  return uws.App() as TemplatedApp;
}

export function localPort(socket: ListenSocket): number {
  return uws.us_socket_local_port(socket as unknown as UwsTypes.us_socket);
}

export function closeListenSocket(socket: ListenSocket): void {
  uws.us_listen_socket_close(socket);
}
export type ListenSocket = UwsTypes.us_listen_socket;

/**
 * Listens on `host:port` alone. uWS shares a port with any other listener
 * by default (SO_REUSEPORT), so a second server started on a port in use
 * would silently take a share of its connections; with the exclusive
 * option the second listen fails instead and the server refuses to start.
 */
export function listenExclusive(app: TemplatedApp, host: string, port: number, onListen: (socket: ListenSocket | false) => void): void {
  // The bundled types omit the (host, port, options, callback) form the binding takes.
  const listen = app.listen as unknown as (host: string, port: number, options: number, cb: (socket: ListenSocket | false) => void) => void;
  // The binding exports the option as a number; the bundled types declare it only as an enum member.
  const exclusive = (uws as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT: number }).LIBUS_LISTEN_EXCLUSIVE_PORT;
  listen.call(app, host, port, exclusive, onListen);
}

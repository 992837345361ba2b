// Declarations of dicehall.js; the message shapes are in protocol.d.ts (generated from the
// protocol's JSON Schemas).

import type {
  ErrorBody,
  Goodbye,
  HelloResult,
  LegalResult,
  ResumeResult,
  PlayerIdentity,
  Requests,
  Results,
  ServerMessage,
  Snapshot,
  TurnWindow,
  Welcome,
} from './protocol.js';

export * from './protocol.js';

export declare const SUBPROTOCOL: 'dicehall.v1.json';
export declare const CLIENT: string;
/** The optional feature of a player known across connections (docs/protocol.md). */
export declare const IDENTITY: 'identity';
/** The optional feature of `resume` saying the room's epoch (docs/protocol.md, "Epochs"). */
export declare const EPOCHS: 'epochs';

/** The fields of a request of type `T`, as `request` takes them (it adds `type` and `id`). */
export type RequestFields<T extends keyof Requests> = Omit<Requests[T], 'type' | 'id'>;

/** An error reply: `code`, `name` (stable), `message` (for people), `rule` (illegal actions). */
export declare class ServerError extends Error {
  constructor(error: ErrorBody);
  readonly code: number;
  readonly rule: string | null | undefined;
}

/** The connection closed before the reply came; the request may or may not have been handled. */
export declare class Disconnected extends Error {}

/** The browser's or the `ws` package's WebSocket class. */
export interface WebSocketClass {
  new (url: string, protocols?: string | string[]): WebSocketLike;
  readonly OPEN: number;
}

export interface WebSocketLike {
  readonly readyState: number;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export type Status = 'connecting' | 'open' | 'closed' | 'replaced';

export interface ConnectionOptions {
  /** The server's WebSocket URL, or a function giving it (default: the page's `/ws`). */
  url?: string | (() => string);
  /**
   * The WebSocket class (default: the global one; on Node before 22, the `ws` package's,
   * loaded by `connect()`).
   */
  WebSocket?: WebSocketClass;
  /** Reopen a dropped connection, with backoff or the server's `retry_ms` (default true). */
  reconnect?: boolean;
  /** A player key (from an earlier `hello`'s `player.key`): `hello` says it, to be that player. */
  key?: string | null;
}

/** A server message that is not a reply, as a 'message' event carries it. */
export type Pushed = Exclude<ServerMessage, { type: 'reply' | 'welcome' }>;

export interface ConnectionEvents {
  status: CustomEvent<Status>;
  message: CustomEvent<Pushed>;
  ready: CustomEvent<null>;
}

export declare class Connection extends EventTarget {
  constructor(options?: ConnectionOptions);
  readonly status: Status;
  readonly isReady: boolean;
  /** The server's clock minus ours, in ms, as the last `ping` measured it. */
  readonly offset: number;
  /** The server's clock now, in unix ms (deadlines are on that clock). */
  readonly now: number;
  readonly welcome: Welcome | null;
  readonly goodbye: Goodbye | null;
  /** The player key `hello` says: the one given, else the one the first `hello` got. */
  key: string | null;
  /** Who this connection plays as (the `identity` feature), once a `hello` said. */
  readonly player: PlayerIdentity | null;
  /** The optional features the latest `hello` turned on. */
  readonly features: ReadonlySet<string>;
  /** Runs after every `welcome`: say `hello` (the default: `hello()`), then resume. */
  onHandshake: ((conn: Connection) => Promise<void>) | null;
  /**
   * `hello` as this connection's player: asks for the `identity` and `epochs` features
   * when the server offers them, says `key`, keeps the reply's `player` and `features`. The first one rejects with a
   * ServerError `bad-key` for a key the server did not sign; a later one goes on as a new
   * player (a server of another deployment).
   */
  hello(fields?: Partial<RequestFields<'hello'>>): Promise<HelloResult>;
  /**
   * Open the connection and keep it open. Resolves once the socket is on its way; rejects
   * (and so does `ready()`) when there is no WebSocket class: on Node before 22 without `ws`.
   */
  connect(): Promise<void>;
  close(): void;
  drop(): void;
  follow(url: string | null | undefined): void;
  ready(): Promise<void>;
  /**
   * The turn window of `room` open as of the latest message received (possibly before a
   * listener saw it), or null: what a listener attached late acts on.
   */
  turn(room: string): TurnWindow | null;
  /**
   * The epoch of `room` (docs/protocol.md, "Epochs") as its latest snapshot or resume
   * reply said; undefined before either. A snapshot may come unasked with a seq at or below
   * the last one: a failover took the room back, and what came after its seq never happened.
   */
  epoch(room: string): number | undefined;
  /**
   * `resume` the stream of `room` after `lastSeq`, saying `epoch` (default: `epoch(room)`)
   * when the feature `epochs` is on, and never otherwise.
   */
  resume(room: string, lastSeq: number, epoch?: number): Promise<ResumeResult>;
  ping(): Promise<void>;
  request<T extends keyof Requests>(type: T, fields?: RequestFields<T>): Promise<Results[T]>;
  addEventListener<K extends keyof ConnectionEvents>(
    type: K,
    listener: (event: ConnectionEvents[K]) => void,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | AddEventListenerOptions,
  ): void;
}

/** A legal action as `legal` lists it: a map to send back as it is. */
export type LegalAction = LegalResult['actions'][number];

/** Picks one of the legal actions (it may look at the seat's view). */
export type Choose = (
  actions: LegalAction[],
  view: LegalResult['view'],
) => LegalAction | Promise<LegalAction>;

/**
 * Take a seat's part in an open turn window by docs/protocol.md's recipe: `legal`, choose,
 * `act`, again while the reply's `owes` is not empty. Resolves to the actions sent.
 */
export declare function answer(
  conn: Connection,
  room: string,
  window: number,
  choose: Choose,
): Promise<number>;

export interface PeekOptions {
  url?: string;
  WebSocket?: WebSocketClass;
  timeoutMs?: number;
  client?: string;
}

/**
 * A one-off spectator's snapshot of a room, on a connection of its own (without
 * `options.WebSocket`, the class `Connection` would use).
 */
export declare function peek(room: string, options?: PeekOptions): Promise<Snapshot>;

/** The WebSocket URL of the page's own server, in a browser. */
export declare function pageUrl(): string;

"""dicehall's wire protocol, v1: the one place that knows the wire format.

- `subprotocols`: names (`dicehall.v1.msgpack`, `dicehall.v1.json`) and negotiation;
- `messages`: every message, typed (client requests, server messages, reply results);
- `codec`: frames <-> messages for both encodings, every input limit enforced;
- `errors`: the error catalogue as one exception tree; `close`: close codes;
- `server_connection` / `client_connection`: the per-connection protocol, sans I/O;
- `schema`: the JSON Schemas under docs/protocol/ (`python -m protocol.schema --write`).

The reference for implementers in any language is docs/protocol.md.
"""

from . import errors
from .client_connection import ClientConnection, Gap, Response
from .close import CloseCode
from .codec import ClientMessageDecoder, Frame, ServerMessageDecoder, encode
from .errors import ProtocolError
from .limits import Limits, ReaderLimits
from .messages.client import (
    Act,
    AddBots,
    ClientMessage,
    Create,
    Games,
    Hello,
    Join,
    Leave,
    Legal,
    Ping,
    Request,
    Resume,
    Rooms,
    SendChat,
    Spectate,
    Start,
)
from .messages.common import (
    Action,
    Actor,
    ErrorBody,
    GameInfo,
    HeldSeat,
    OptionInfo,
    RoomInfo,
    SeatAction,
    SeatInfo,
    Tile,
)
from .messages.results import (
    AddBotsResult,
    ChatResult,
    CreateResult,
    Empty,
    GamesResult,
    HelloResult,
    JoinResult,
    LegalResult,
    PingResult,
    Result,
    ResumeResult,
    RoomsResult,
    StartResult,
)
from .messages.server import (
    Chat,
    ErrorMessage,
    Event,
    GameOver,
    Goodbye,
    Reply,
    RoomMessage,
    RoomUpdate,
    ServerMessage,
    Snapshot,
    TurnWindow,
    Welcome,
    Window,
    WindowClosed,
)
from .server_connection import Close, ConnectionState, Send, ServerConnection
from .subprotocols import SUBPROTOCOLS, VERSION, Encoding, refusal_reason, select, subprotocol

__all__ = [
    "SUBPROTOCOLS",
    "VERSION",
    "Act",
    "Action",
    "Actor",
    "AddBots",
    "AddBotsResult",
    "Chat",
    "ChatResult",
    "ClientConnection",
    "ClientMessage",
    "ClientMessageDecoder",
    "Close",
    "CloseCode",
    "ConnectionState",
    "Create",
    "CreateResult",
    "Empty",
    "Encoding",
    "ErrorBody",
    "ErrorMessage",
    "Event",
    "Frame",
    "GameInfo",
    "GameOver",
    "Games",
    "GamesResult",
    "Gap",
    "Goodbye",
    "HeldSeat",
    "Hello",
    "HelloResult",
    "Join",
    "JoinResult",
    "Leave",
    "Legal",
    "LegalResult",
    "Limits",
    "OptionInfo",
    "Ping",
    "PingResult",
    "ProtocolError",
    "ReaderLimits",
    "Reply",
    "Request",
    "Response",
    "Result",
    "Resume",
    "ResumeResult",
    "RoomInfo",
    "RoomMessage",
    "RoomUpdate",
    "Rooms",
    "RoomsResult",
    "SeatAction",
    "SeatInfo",
    "Send",
    "SendChat",
    "ServerConnection",
    "ServerMessage",
    "ServerMessageDecoder",
    "Snapshot",
    "Spectate",
    "Start",
    "StartResult",
    "Tile",
    "TurnWindow",
    "Welcome",
    "Window",
    "WindowClosed",
    "encode",
    "errors",
    "refusal_reason",
    "select",
    "subprotocol",
]

from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RefusalReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REFUSAL_REASON_UNSPECIFIED: _ClassVar[RefusalReason]
    REFUSAL_REASON_BAD_TOKEN: _ClassVar[RefusalReason]
    REFUSAL_REASON_MISSING_TOKEN: _ClassVar[RefusalReason]
    REFUSAL_REASON_UNSUPPORTED_PROTOCOL: _ClassVar[RefusalReason]
    REFUSAL_REASON_DISQUALIFIED: _ClassVar[RefusalReason]
    REFUSAL_REASON_DUPLICATE_SESSION: _ClassVar[RefusalReason]
    REFUSAL_REASON_ARENA_FULL: _ClassVar[RefusalReason]
    REFUSAL_REASON_WITHDRAWN: _ClassVar[RefusalReason]

class NoticeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NOTICE_KIND_UNSPECIFIED: _ClassVar[NoticeKind]
    NOTICE_KIND_ILLEGAL_ANSWER: _ClassVar[NoticeKind]
    NOTICE_KIND_LATE_ANSWER: _ClassVar[NoticeKind]
    NOTICE_KIND_UNKNOWN_REQUEST_ID: _ClassVar[NoticeKind]
    NOTICE_KIND_MALFORMED_MESSAGE: _ClassVar[NoticeKind]
    NOTICE_KIND_OUT_OF_TURN: _ClassVar[NoticeKind]
    NOTICE_KIND_FALLBACK_PLAYED: _ClassVar[NoticeKind]
    NOTICE_KIND_DISQUALIFIED: _ClassVar[NoticeKind]
    NOTICE_KIND_FLOOD: _ClassVar[NoticeKind]

class Suit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUIT_UNSPECIFIED: _ClassVar[Suit]
    SUIT_SPADES: _ClassVar[Suit]
    SUIT_HEARTS: _ClassVar[Suit]
    SUIT_DIAMONDS: _ClassVar[Suit]
    SUIT_CLUBS: _ClassVar[Suit]

class LowerTrump(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LOWER_TRUMP_UNSPECIFIED: _ClassVar[LowerTrump]
    LOWER_TRUMP_ANY: _ClassVar[LowerTrump]
    LOWER_TRUMP_TRUMP: _ClassVar[LowerTrump]

class Scoring(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCORING_UNSPECIFIED: _ClassVar[Scoring]
    SCORING_STANDARD: _ClassVar[Scoring]
    SCORING_PAGAT: _ClassVar[Scoring]
    SCORING_DY: _ClassVar[Scoring]

class Penalty(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PENALTY_UNSPECIFIED: _ClassVar[Penalty]
    PENALTY_WHOLE: _ClassVar[Penalty]
    PENALTY_SHORTFALL: _ClassVar[Penalty]

class TrumpMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TRUMP_MODE_UNSPECIFIED: _ClassVar[TrumpMode]
    TRUMP_MODE_FIXED: _ClassVar[TrumpMode]
    TRUMP_MODE_LAST_CARD: _ClassVar[TrumpMode]
REFUSAL_REASON_UNSPECIFIED: RefusalReason
REFUSAL_REASON_BAD_TOKEN: RefusalReason
REFUSAL_REASON_MISSING_TOKEN: RefusalReason
REFUSAL_REASON_UNSUPPORTED_PROTOCOL: RefusalReason
REFUSAL_REASON_DISQUALIFIED: RefusalReason
REFUSAL_REASON_DUPLICATE_SESSION: RefusalReason
REFUSAL_REASON_ARENA_FULL: RefusalReason
REFUSAL_REASON_WITHDRAWN: RefusalReason
NOTICE_KIND_UNSPECIFIED: NoticeKind
NOTICE_KIND_ILLEGAL_ANSWER: NoticeKind
NOTICE_KIND_LATE_ANSWER: NoticeKind
NOTICE_KIND_UNKNOWN_REQUEST_ID: NoticeKind
NOTICE_KIND_MALFORMED_MESSAGE: NoticeKind
NOTICE_KIND_OUT_OF_TURN: NoticeKind
NOTICE_KIND_FALLBACK_PLAYED: NoticeKind
NOTICE_KIND_DISQUALIFIED: NoticeKind
NOTICE_KIND_FLOOD: NoticeKind
SUIT_UNSPECIFIED: Suit
SUIT_SPADES: Suit
SUIT_HEARTS: Suit
SUIT_DIAMONDS: Suit
SUIT_CLUBS: Suit
LOWER_TRUMP_UNSPECIFIED: LowerTrump
LOWER_TRUMP_ANY: LowerTrump
LOWER_TRUMP_TRUMP: LowerTrump
SCORING_UNSPECIFIED: Scoring
SCORING_STANDARD: Scoring
SCORING_PAGAT: Scoring
SCORING_DY: Scoring
PENALTY_UNSPECIFIED: Penalty
PENALTY_WHOLE: Penalty
PENALTY_SHORTFALL: Penalty
TRUMP_MODE_UNSPECIFIED: TrumpMode
TRUMP_MODE_FIXED: TrumpMode
TRUMP_MODE_LAST_CARD: TrumpMode

class ConnectRequest(_message.Message):
    __slots__ = ("hello", "call", "play", "error")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    call: CallAnswer
    play: PlayAnswer
    error: BotError
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., call: _Optional[_Union[CallAnswer, _Mapping]] = ..., play: _Optional[_Union[PlayAnswer, _Mapping]] = ..., error: _Optional[_Union[BotError, _Mapping]] = ...) -> None: ...

class ConnectResponse(_message.Message):
    __slots__ = ("welcome", "refusal", "call_request", "play_request", "event", "notice")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    REFUSAL_FIELD_NUMBER: _ClassVar[int]
    CALL_REQUEST_FIELD_NUMBER: _ClassVar[int]
    PLAY_REQUEST_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    refusal: Refusal
    call_request: CallRequest
    play_request: PlayRequest
    event: Event
    notice: Notice
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., refusal: _Optional[_Union[Refusal, _Mapping]] = ..., call_request: _Optional[_Union[CallRequest, _Mapping]] = ..., play_request: _Optional[_Union[PlayRequest, _Mapping]] = ..., event: _Optional[_Union[Event, _Mapping]] = ..., notice: _Optional[_Union[Notice, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("bot_name", "bot_version", "token", "protocol_version", "events")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    bot_version: str
    token: str
    protocol_version: int
    events: bool
    def __init__(self, bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., token: _Optional[str] = ..., protocol_version: _Optional[int] = ..., events: _Optional[bool] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("session_id", "arena_version", "protocol_version", "rules", "max_tables", "max_retries", "deadline_ms", "reconnect_grace_ms", "takes_bot_errors")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ARENA_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    MAX_TABLES_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    RECONNECT_GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    TAKES_BOT_ERRORS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    arena_version: str
    protocol_version: int
    rules: Rules
    max_tables: int
    max_retries: int
    deadline_ms: int
    reconnect_grace_ms: int
    takes_bot_errors: bool
    def __init__(self, session_id: _Optional[str] = ..., arena_version: _Optional[str] = ..., protocol_version: _Optional[int] = ..., rules: _Optional[_Union[Rules, _Mapping]] = ..., max_tables: _Optional[int] = ..., max_retries: _Optional[int] = ..., deadline_ms: _Optional[int] = ..., reconnect_grace_ms: _Optional[int] = ..., takes_bot_errors: _Optional[bool] = ...) -> None: ...

class Refusal(_message.Message):
    __slots__ = ("reason", "detail")
    REASON_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    reason: RefusalReason
    detail: str
    def __init__(self, reason: _Optional[_Union[RefusalReason, str]] = ..., detail: _Optional[str] = ...) -> None: ...

class CallRequest(_message.Message):
    __slots__ = ("request_id", "table_id", "seat", "deadline_ms", "time_bank_ms", "legal_calls", "view", "retry_reason")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_CALLS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    RETRY_REASON_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    table_id: str
    seat: int
    deadline_ms: int
    time_bank_ms: int
    legal_calls: _containers.RepeatedScalarFieldContainer[int]
    view: SeatView
    retry_reason: str
    def __init__(self, request_id: _Optional[int] = ..., table_id: _Optional[str] = ..., seat: _Optional[int] = ..., deadline_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., legal_calls: _Optional[_Iterable[int]] = ..., view: _Optional[_Union[SeatView, _Mapping]] = ..., retry_reason: _Optional[str] = ...) -> None: ...

class CallAnswer(_message.Message):
    __slots__ = ("request_id", "call")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    call: int
    def __init__(self, request_id: _Optional[int] = ..., call: _Optional[int] = ...) -> None: ...

class PlayRequest(_message.Message):
    __slots__ = ("request_id", "table_id", "seat", "deadline_ms", "time_bank_ms", "legal_cards", "view", "retry_reason")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_CARDS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    RETRY_REASON_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    table_id: str
    seat: int
    deadline_ms: int
    time_bank_ms: int
    legal_cards: _containers.RepeatedScalarFieldContainer[str]
    view: SeatView
    retry_reason: str
    def __init__(self, request_id: _Optional[int] = ..., table_id: _Optional[str] = ..., seat: _Optional[int] = ..., deadline_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., legal_cards: _Optional[_Iterable[str]] = ..., view: _Optional[_Union[SeatView, _Mapping]] = ..., retry_reason: _Optional[str] = ...) -> None: ...

class PlayAnswer(_message.Message):
    __slots__ = ("request_id", "card")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    card: str
    def __init__(self, request_id: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class BotError(_message.Message):
    __slots__ = ("request_id", "error_type", "message", "file", "line")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_TYPE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    error_type: str
    message: str
    file: str
    line: int
    def __init__(self, request_id: _Optional[int] = ..., error_type: _Optional[str] = ..., message: _Optional[str] = ..., file: _Optional[str] = ..., line: _Optional[int] = ...) -> None: ...

class SeatView(_message.Message):
    __slots__ = ("game_id", "game_number", "round_number", "rounds_in_game", "seat", "dealer", "trump", "hand", "calls", "current_trick", "finished_tricks", "tricks_won", "total_tenths", "past_rounds", "player_names", "rules", "seat_seed")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_NUMBER_FIELD_NUMBER: _ClassVar[int]
    ROUND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_IN_GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    CURRENT_TRICK_FIELD_NUMBER: _ClassVar[int]
    FINISHED_TRICKS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TENTHS_FIELD_NUMBER: _ClassVar[int]
    PAST_ROUNDS_FIELD_NUMBER: _ClassVar[int]
    PLAYER_NAMES_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEAT_SEED_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    game_number: int
    round_number: int
    rounds_in_game: int
    seat: int
    dealer: int
    trump: Suit
    hand: _containers.RepeatedScalarFieldContainer[str]
    calls: _containers.RepeatedCompositeFieldContainer[Call]
    current_trick: Trick
    finished_tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    total_tenths: _containers.RepeatedScalarFieldContainer[int]
    past_rounds: _containers.RepeatedCompositeFieldContainer[RoundResult]
    player_names: _containers.RepeatedScalarFieldContainer[str]
    rules: Rules
    seat_seed: int
    def __init__(self, game_id: _Optional[str] = ..., game_number: _Optional[int] = ..., round_number: _Optional[int] = ..., rounds_in_game: _Optional[int] = ..., seat: _Optional[int] = ..., dealer: _Optional[int] = ..., trump: _Optional[_Union[Suit, str]] = ..., hand: _Optional[_Iterable[str]] = ..., calls: _Optional[_Iterable[_Union[Call, _Mapping]]] = ..., current_trick: _Optional[_Union[Trick, _Mapping]] = ..., finished_tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., tricks_won: _Optional[_Iterable[int]] = ..., total_tenths: _Optional[_Iterable[int]] = ..., past_rounds: _Optional[_Iterable[_Union[RoundResult, _Mapping]]] = ..., player_names: _Optional[_Iterable[str]] = ..., rules: _Optional[_Union[Rules, _Mapping]] = ..., seat_seed: _Optional[int] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("table_id", "seat", "game_id", "game_start", "round_start", "call_made", "card_played", "trick_won", "round_end", "game_end", "redeal")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_START_FIELD_NUMBER: _ClassVar[int]
    ROUND_START_FIELD_NUMBER: _ClassVar[int]
    CALL_MADE_FIELD_NUMBER: _ClassVar[int]
    CARD_PLAYED_FIELD_NUMBER: _ClassVar[int]
    TRICK_WON_FIELD_NUMBER: _ClassVar[int]
    ROUND_END_FIELD_NUMBER: _ClassVar[int]
    GAME_END_FIELD_NUMBER: _ClassVar[int]
    REDEAL_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    seat: int
    game_id: str
    game_start: GameStart
    round_start: RoundStart
    call_made: CallMade
    card_played: CardPlayed
    trick_won: TrickWon
    round_end: RoundEnd
    game_end: GameEnd
    redeal: Redeal
    def __init__(self, table_id: _Optional[str] = ..., seat: _Optional[int] = ..., game_id: _Optional[str] = ..., game_start: _Optional[_Union[GameStart, _Mapping]] = ..., round_start: _Optional[_Union[RoundStart, _Mapping]] = ..., call_made: _Optional[_Union[CallMade, _Mapping]] = ..., card_played: _Optional[_Union[CardPlayed, _Mapping]] = ..., trick_won: _Optional[_Union[TrickWon, _Mapping]] = ..., round_end: _Optional[_Union[RoundEnd, _Mapping]] = ..., game_end: _Optional[_Union[GameEnd, _Mapping]] = ..., redeal: _Optional[_Union[Redeal, _Mapping]] = ...) -> None: ...

class GameStart(_message.Message):
    __slots__ = ("seat", "player_names", "rules", "game_number")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_NAMES_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    GAME_NUMBER_FIELD_NUMBER: _ClassVar[int]
    seat: int
    player_names: _containers.RepeatedScalarFieldContainer[str]
    rules: Rules
    game_number: int
    def __init__(self, seat: _Optional[int] = ..., player_names: _Optional[_Iterable[str]] = ..., rules: _Optional[_Union[Rules, _Mapping]] = ..., game_number: _Optional[int] = ...) -> None: ...

class RoundStart(_message.Message):
    __slots__ = ("round_number", "dealer", "hand", "trump")
    ROUND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    round_number: int
    dealer: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    trump: Suit
    def __init__(self, round_number: _Optional[int] = ..., dealer: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., trump: _Optional[_Union[Suit, str]] = ...) -> None: ...

class CallMade(_message.Message):
    __slots__ = ("seat", "call")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    call: int
    def __init__(self, seat: _Optional[int] = ..., call: _Optional[int] = ...) -> None: ...

class CardPlayed(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class TrickWon(_message.Message):
    __slots__ = ("winner", "trick")
    WINNER_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    winner: int
    trick: Trick
    def __init__(self, winner: _Optional[int] = ..., trick: _Optional[_Union[Trick, _Mapping]] = ...) -> None: ...

class RoundEnd(_message.Message):
    __slots__ = ("result", "total_tenths")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TENTHS_FIELD_NUMBER: _ClassVar[int]
    result: RoundResult
    total_tenths: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, result: _Optional[_Union[RoundResult, _Mapping]] = ..., total_tenths: _Optional[_Iterable[int]] = ...) -> None: ...

class GameEnd(_message.Message):
    __slots__ = ("total_tenths", "places")
    TOTAL_TENTHS_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    total_tenths: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, total_tenths: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ...) -> None: ...

class Redeal(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class Notice(_message.Message):
    __slots__ = ("kind", "request_id", "table_id", "detail")
    KIND_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    kind: NoticeKind
    request_id: int
    table_id: str
    detail: str
    def __init__(self, kind: _Optional[_Union[NoticeKind, str]] = ..., request_id: _Optional[int] = ..., table_id: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class Call(_message.Message):
    __slots__ = ("seat", "value")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    value: int
    def __init__(self, seat: _Optional[int] = ..., value: _Optional[int] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("leader", "cards", "winner")
    LEADER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    leader: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    winner: int
    def __init__(self, leader: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ..., winner: _Optional[int] = ...) -> None: ...

class RoundResult(_message.Message):
    __slots__ = ("round_number", "calls", "tricks", "score_tenths")
    ROUND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    SCORE_TENTHS_FIELD_NUMBER: _ClassVar[int]
    round_number: int
    calls: _containers.RepeatedScalarFieldContainer[int]
    tricks: _containers.RepeatedScalarFieldContainer[int]
    score_tenths: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, round_number: _Optional[int] = ..., calls: _Optional[_Iterable[int]] = ..., tricks: _Optional[_Iterable[int]] = ..., score_tenths: _Optional[_Iterable[int]] = ...) -> None: ...

class Rules(_message.Message):
    __slots__ = ("profile", "min_call", "max_call", "must_beat", "must_trump", "lower_trump", "first_lead_no_trump", "scoring", "penalty", "overtrick_tenths", "pagat_bonus", "redeal_below", "redeal_no_trump", "exact8_wins", "rounds", "trump_mode", "trump_suit", "draw_seating")
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    MIN_CALL_FIELD_NUMBER: _ClassVar[int]
    MAX_CALL_FIELD_NUMBER: _ClassVar[int]
    MUST_BEAT_FIELD_NUMBER: _ClassVar[int]
    MUST_TRUMP_FIELD_NUMBER: _ClassVar[int]
    LOWER_TRUMP_FIELD_NUMBER: _ClassVar[int]
    FIRST_LEAD_NO_TRUMP_FIELD_NUMBER: _ClassVar[int]
    SCORING_FIELD_NUMBER: _ClassVar[int]
    PENALTY_FIELD_NUMBER: _ClassVar[int]
    OVERTRICK_TENTHS_FIELD_NUMBER: _ClassVar[int]
    PAGAT_BONUS_FIELD_NUMBER: _ClassVar[int]
    REDEAL_BELOW_FIELD_NUMBER: _ClassVar[int]
    REDEAL_NO_TRUMP_FIELD_NUMBER: _ClassVar[int]
    EXACT8_WINS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    TRUMP_MODE_FIELD_NUMBER: _ClassVar[int]
    TRUMP_SUIT_FIELD_NUMBER: _ClassVar[int]
    DRAW_SEATING_FIELD_NUMBER: _ClassVar[int]
    profile: str
    min_call: int
    max_call: int
    must_beat: bool
    must_trump: bool
    lower_trump: LowerTrump
    first_lead_no_trump: bool
    scoring: Scoring
    penalty: Penalty
    overtrick_tenths: int
    pagat_bonus: int
    redeal_below: int
    redeal_no_trump: bool
    exact8_wins: bool
    rounds: int
    trump_mode: TrumpMode
    trump_suit: Suit
    draw_seating: bool
    def __init__(self, profile: _Optional[str] = ..., min_call: _Optional[int] = ..., max_call: _Optional[int] = ..., must_beat: _Optional[bool] = ..., must_trump: _Optional[bool] = ..., lower_trump: _Optional[_Union[LowerTrump, str]] = ..., first_lead_no_trump: _Optional[bool] = ..., scoring: _Optional[_Union[Scoring, str]] = ..., penalty: _Optional[_Union[Penalty, str]] = ..., overtrick_tenths: _Optional[int] = ..., pagat_bonus: _Optional[int] = ..., redeal_below: _Optional[int] = ..., redeal_no_trump: _Optional[bool] = ..., exact8_wins: _Optional[bool] = ..., rounds: _Optional[int] = ..., trump_mode: _Optional[_Union[TrumpMode, str]] = ..., trump_suit: _Optional[_Union[Suit, str]] = ..., draw_seating: _Optional[bool] = ...) -> None: ...

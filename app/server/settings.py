"""Wenchang settings: ``WENCHANG_*`` variables over ``wenchang.toml``, checked once.

Every value is validated at startup; a bad one stops the process with a message
that names the setting and shows a correct spelling.
"""

import json
import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from app.infra.backend_urls import (
    STORAGE_URLS,
    URLS_BY_SETTING,
    Backend,
    backend_of,
    sqlite_path,
)
from app.server.area_ttl_setting import area_ttl
from app.server.durations import parse_duration
from app.server.settings_problems import SettingsError, describe_problems
from app.server.webhook_settings import WebhookSettings
from app.shared.identity import Grant, parse_grants

MAX_FILE_BYTES_CEILING = 1_048_576
MAX_REQUEST_BYTES_CEILING = 16 * 1_048_576
DEFAULT_RATE_LIMIT = 100_000
"""Requests per token per window by default: above what one process serves, so
the default never throttles an ordinary client (see docs/configuration.md)."""
CommaList = Annotated[tuple[str, ...], NoDecode]
RolesTable = Annotated[dict[str, list[str]], NoDecode]
AreaTtl = Annotated[dict[str, int], NoDecode, BeforeValidator(area_ttl)]


def _comma_list(value: object) -> object:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


class Settings(WebhookSettings):
    model_config = SettingsConfigDict(env_prefix="WENCHANG_", extra="forbid")
    config_path: ClassVar[Path | None] = None

    storage: str = "sqlite:///./wenchang.db"
    tokens_file: str | None = None
    max_file_bytes: int = Field(default=16384, gt=0, le=MAX_FILE_BYTES_CEILING)
    index_max_bytes: int = Field(default=65536, gt=0)
    list_page_size: int = Field(default=100, gt=0, le=10_000)
    max_files_per_entity: int = Field(default=500, ge=0)
    scope_priority: CommaList = ()
    write_roles: RolesTable = Field(default_factory=dict[str, list[str]])
    area_ttl: AreaTtl = Field(default_factory=dict[str, int])
    product: str | None = None
    tool_prefix: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_]*$")
    prompt_purpose: str | None = None
    prompt_scope_guidance: str | None = None
    prompt_seed_areas: str | None = None
    prompt_systems_of_record: str | None = None
    require_approval: CommaList = ()
    index_cache: str = "memory"
    index_cache_ttl: float = Field(default=30, gt=0)
    allowed_hosts: CommaList = ("127.0.0.1:*", "localhost:*", "[::1]:*")
    allowed_origins: CommaList = (
        "http://127.0.0.1:*",
        "http://localhost:*",
        "http://[::1]:*",
    )
    local_identity: CommaList = ("user=local:owner",)
    cursor_secret: str | None = Field(default=None, min_length=16)
    rate_limit: int = Field(default=DEFAULT_RATE_LIMIT, ge=0)
    rate_limit_window: float = Field(default=60, gt=0, le=86_400)
    max_request_bytes: int = Field(
        default=1_048_576, ge=1024, le=MAX_REQUEST_BYTES_CEILING
    )
    request_store: str | None = None
    rate_limit_store: str = "memory"
    log_format: Literal["text", "json"] = "text"
    sqlite_synchronous: Literal["full", "normal"] = "full"
    audit: str | None = None
    audit_roles: CommaList = ("owner", "admin")
    audit_max_days: int = Field(default=365, gt=0, le=36_500)
    history_max_versions: int = Field(default=100, gt=0, le=100_000)
    history_max_days: int = Field(default=90, ge=0, le=36_500)
    history_tools: bool = True
    changes_retention: float = Field(default=7 * 86_400, ge=60, le=365 * 86_400)
    """How long the change feed keeps changes (``7d``; ``docs/changes.md``)."""
    fast_paths: Literal["on", "off"] = "on"
    """``off`` serves every request by the declared path (``app.server.fast``)."""
    public_url: str | None = Field(
        default=None, pattern=r"^https?://[^/?#]+(/[^?#]*)?$"
    )
    oauth_trusted_client_hosts: CommaList = ()
    oauth_ca_file: str | None = None
    oauth_access_ttl: float = Field(default=3600, ge=60, le=86_400)
    oauth_unused_client_ttl: float = Field(default=30 * 86_400, ge=60)
    mcp_sessions: int = Field(default=1000, ge=0, le=100_000)
    """Open sessions of ``/mcp/session`` at once (``0``: no such endpoint)."""
    mcp_session_idle: float = Field(default=30 * 60, ge=1, le=86_400)
    """Seconds a ``/mcp/session`` session may go without a request in flight."""

    @field_validator(
        "scope_priority",
        "require_approval",
        "allowed_hosts",
        "allowed_origins",
        "local_identity",
        "audit_roles",
        "oauth_trusted_client_hosts",
        mode="before",
    )
    @classmethod
    def _split(cls, value: object) -> object:
        return _comma_list(value)

    @field_validator(
        "oauth_access_ttl",
        "oauth_unused_client_ttl",
        "changes_retention",
        "mcp_session_idle",
        mode="before",
    )
    @classmethod
    def _duration(cls, value: object) -> object:
        return parse_duration(value) if isinstance(value, str) else value

    @field_validator("public_url")
    @classmethod
    def _no_trailing_slash(cls, value: str | None) -> str | None:
        return value.rstrip("/") if value else value

    @field_validator("sqlite_synchronous", "fast_paths", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @field_validator("scope_priority")
    @classmethod
    def _distinct(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise ValueError("list each scope once, e.g. user,project")
        return value

    @field_validator("write_roles", mode="before")
    @classmethod
    def _json_object(cls, value: object) -> object:
        # Decoded here rather than by pydantic-settings, whose decode error names
        # neither the variable nor the expected shape.
        if not isinstance(value, str):
            return value
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            raise ValueError(
                'use a JSON object of scope to roles, e.g. {"project": ["owner"]}'
            ) from None

    @field_validator(
        "storage", "index_cache", "request_store", "rate_limit_store", "audit"
    )
    @classmethod
    def _backend_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None:
            backend_of(value, URLS_BY_SETTING[str(info.field_name)])
        return value

    @field_validator("audit_roles")
    @classmethod
    def _audit_roles(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("name at least one role, e.g. owner,admin")
        return value

    @field_validator("local_identity")
    @classmethod
    def _local_identity(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        parse_grants(list(value))
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if cls.config_path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, cls.config_path))
        return tuple(sources)

    @property
    def local_grants(self) -> dict[str, Grant]:
        return parse_grants(list(self.local_identity))

    @property
    def write_policy(self) -> dict[str, frozenset[str]]:
        return {scope: frozenset(roles) for scope, roles in self.write_roles.items()}

    @property
    def sqlite_path(self) -> Path | None:
        if backend_of(self.storage, STORAGE_URLS) is Backend.SQLITE:
            return sqlite_path(self.storage)
        return None

    @property
    def request_store_url(self) -> str:
        """Where idempotency records live.

        By default they share the SQLite database (so processes on one file share
        them); other storage keeps them in this process. Rate-limit windows have
        their own setting, ``rate_limit_store``: in process unless shared on purpose,
        so counting a request never costs a storage write.
        """
        if self.request_store is not None:
            return self.request_store
        return self.storage if self.sqlite_path is not None else "memory"

    @property
    def audit_url(self) -> str:
        """Where audit events go: the SQLite database by default, else stdout."""
        if self.audit is not None:
            return self.audit
        return self.storage if self.sqlite_path is not None else "stdout"

    @property
    def oauth_store_path(self) -> Path | None:
        """Where OAuth clients and tokens live: the SQLite database, else a
        SQLite file beside the token file; None (this process) for memory://."""
        if backend_of(self.storage, STORAGE_URLS) is Backend.MEMORY:
            return None
        return self.sqlite_path or self.tokens_path.with_name("wenchang-oauth.db")

    @property
    def tokens_path(self) -> Path:
        if self.tokens_file:
            return Path(self.tokens_file)
        database = self.sqlite_path
        if database is not None:
            return database.parent / "wenchang-tokens.json"
        return Path("wenchang-tokens.json")


def load_settings(**overrides: Any) -> Settings:
    """Read and validate settings; raise SettingsError naming every bad one."""
    raw_path = os.environ.get("WENCHANG_CONFIG")
    path = Path(raw_path) if raw_path else Path("wenchang.toml")
    if raw_path and not path.is_file():
        raise SettingsError(
            f"WENCHANG_CONFIG points at {raw_path!r}, which is not a file"
        )
    configured = type(
        "ConfiguredSettings",
        (Settings,),
        {"config_path": path if path.is_file() else None},
    )
    try:
        return configured(**overrides)
    except ValidationError as exc:
        raise SettingsError(describe_problems(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(
            f"{path} is not valid TOML ({exc}); fix it, or point WENCHANG_CONFIG at "
            "another file"
        ) from None
    except (ValueError, json.JSONDecodeError) as exc:
        raise SettingsError(f"Invalid Wenchang settings: {exc}") from None

"""RFC 6749 errors of the OAuth flow: a code and a sentence, nothing secret."""

from typing import Literal

OAuthErrorCode = Literal[
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "unauthorized_client",
    "unsupported_grant_type",
    "unsupported_response_type",
    "invalid_scope",
    "invalid_target",
    "invalid_redirect_uri",
    "invalid_client_metadata",
    "access_denied",
    "unsupported_token_type",
]


class OAuthError(Exception):
    """A refused OAuth request; ``description`` names what to fix, never a
    token, a person or an entity."""

    def __init__(self, code: OAuthErrorCode, description: str) -> None:
        super().__init__(code, description)
        self.code: OAuthErrorCode = code
        self.description = description

    def body(self) -> dict[str, str]:
        return {"error": self.code, "error_description": self.description}

"""The log-in back-off: which failed attempts are counted where, and who is stopped (docs/login-limits.md).

Three counters of *failed* attempts, checked before the password is, so a blocked attempt costs no hash:
- per (account, client IP): a short limit, so a typo streak or a guesser slows down on that account from there;
- per client IP across accounts: stops one address spraying many accounts;
- per account across all IPs: a slower ceiling (OWASP ASVS 2.2.1: at most 100 failures an hour per account)
  against a guesser with many addresses.
An (account, IP) pair that logged in successfully within `known_ip_days` is "known": only its own pair limit
applies to it, so neither a sprayer behind the same NAT nor a distributed guesser locks the owner out of a place
they log in from. Nobody can make a pair known without the password. Unknown emails are counted the same way as
real ones, so a 429 says nothing about whether an account exists."""

from __future__ import annotations

from dataclasses import dataclass

from headroom.platform.ratelimit import RateLimiter, check
from headroom.platform.settings import Settings


@dataclass(frozen=True)
class LoginLimits:
    per_account_ip: int
    per_ip: int
    window_seconds: int
    per_account: int
    account_window_seconds: int
    known_ip_seconds: int

    @classmethod
    def from_settings(cls, settings: Settings) -> LoginLimits:
        return cls(
            per_account_ip=settings.login_rate_per_account_ip,
            per_ip=settings.login_rate_per_ip,
            window_seconds=settings.login_rate_window_seconds,
            per_account=settings.login_rate_per_account,
            account_window_seconds=settings.login_rate_account_window_seconds,
            known_ip_seconds=settings.login_known_ip_days * 86400,
        )


def _keys(email: str, ip: str) -> tuple[str, str, str, str]:
    account = email.strip().lower()
    return (
        f"login:pair:{account}:{ip}",
        f"login:ip:{ip}",
        f"login:account:{account}",
        f"login:known:{account}:{ip}",
    )


def before_attempt(limiter: RateLimiter, limits: LoginLimits, *, email: str, ip: str) -> None:
    """Raise RateLimited when this attempt is over a limit (nothing is counted here)."""
    pair, per_ip, account, known = _keys(email, ip)
    check(limiter, pair, limits.per_account_ip,
          "Too many failed log-ins for this account from your address; wait, then try again.")
    if limiter.peek(known)[0] > 0:
        return
    check(limiter, per_ip, limits.per_ip, "Too many failed log-ins from your address; wait, then try again.")
    check(limiter, account, limits.per_account,
          "Too many failed log-ins for this account; wait, then try again from where you usually log in.")


def after_failure(limiter: RateLimiter, limits: LoginLimits, *, email: str, ip: str) -> None:
    pair, per_ip, account, _ = _keys(email, ip)
    limiter.add(pair, limits.window_seconds)
    limiter.add(per_ip, limits.window_seconds)
    limiter.add(account, limits.account_window_seconds)


def after_success(limiter: RateLimiter, limits: LoginLimits, *, email: str, ip: str) -> None:
    """Clear this pair's failures and remember it as known; the account-wide count stays (it is the guesser's)."""
    pair, _, _, known = _keys(email, ip)
    limiter.reset(pair)
    limiter.reset(known)  # a fresh window: known for `known_ip_seconds` from this log-in
    limiter.add(known, limits.known_ip_seconds)

"""SMTP transport against real aiosmtpd servers: STARTTLS and implicit TLS with a throw-away certificate, AUTH
over TLS, and the failures that are configuration errors (permanent) rather than a busy server."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from headroom.platform.settings import Settings
from headroom.platform.smtp import (
    PermanentSendError,
    SmtpConfig,
    compose,
    config_from_settings,
    send_message,
)
from smtp_server import SmtpRecorder, free_port


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (key, cert)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    d = tmp_path_factory.mktemp("tls")
    key_path, cert_path = d / "key.pem", d / "cert.pem"
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return key_path, cert_path


def _server_context(cert: tuple[Path, Path]) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cert[1]), str(cert[0]))
    return ctx


def _client_context(cert: tuple[Path, Path]) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cert[1]))


def _serve(recorder: SmtpRecorder, **kwargs: Any) -> Iterator[SmtpRecorder]:
    recorder.port = free_port()
    controller = Controller(recorder, hostname="127.0.0.1", port=recorder.port,
                            authenticator=recorder.authenticate, **kwargs)
    controller.start()
    try:
        yield recorder
    finally:
        controller.stop()


@pytest.fixture()
def starttls_server(cert: tuple[Path, Path]) -> Iterator[SmtpRecorder]:
    yield from _serve(SmtpRecorder(), tls_context=_server_context(cert), require_starttls=True)


@pytest.fixture()
def ssl_server(cert: tuple[Path, Path]) -> Iterator[SmtpRecorder]:
    yield from _serve(SmtpRecorder(), ssl_context=_server_context(cert))


def _message() -> Any:
    return compose("Headroom <digest@headroom.example.com>", ["ops@example.com"], "Subject line", "plain body",
                   "<p>html body</p>")


def test_starttls_with_auth_delivers(starttls_server: SmtpRecorder, cert: tuple[Path, Path]) -> None:
    config = SmtpConfig(host="127.0.0.1", port=starttls_server.port, sender="digest@headroom.example.com",
                        security="starttls", username="mailer", password="s3cret-smtp-pass",
                        ssl_context=_client_context(cert))
    result = send_message(config, _message(), ["ops@example.com"])
    assert result.accepted == ("ops@example.com",) and result.refused == {}
    assert starttls_server.logins == [("mailer", "s3cret-smtp-pass")]
    (got,) = starttls_server.received
    assert got.rcpt_tos == ["ops@example.com"] and got.mail_from == "digest@headroom.example.com"
    assert got.message.get_body(preferencelist=("html",)).get_content().strip() == "<p>html body</p>"


def test_wrong_password_is_permanent(starttls_server: SmtpRecorder, cert: tuple[Path, Path]) -> None:
    config = SmtpConfig(host="127.0.0.1", port=starttls_server.port, sender="digest@headroom.example.com",
                        username="mailer", password="wrong-password-xyz", ssl_context=_client_context(cert))
    with pytest.raises(PermanentSendError, match="authentication failed: 535") as caught:
        send_message(config, _message(), ["ops@example.com"])
    assert "wrong-password-xyz" not in str(caught.value)
    assert starttls_server.received == []


def test_implicit_tls_delivers(ssl_server: SmtpRecorder, cert: tuple[Path, Path]) -> None:
    config = SmtpConfig(host="127.0.0.1", port=ssl_server.port, sender="digest@headroom.example.com",
                        security="ssl", ssl_context=_client_context(cert))
    send_message(config, _message(), ["ops@example.com"])
    assert [r.rcpt_tos for r in ssl_server.received] == [["ops@example.com"]]


def test_untrusted_certificate_is_permanent(ssl_server: SmtpRecorder) -> None:
    config = SmtpConfig(host="127.0.0.1", port=ssl_server.port, sender="digest@headroom.example.com",
                        security="ssl")  # the system trust store does not know the test certificate
    with pytest.raises(PermanentSendError, match="TLS failed"):
        send_message(config, _message(), ["ops@example.com"])
    assert ssl_server.received == []


def test_starttls_against_a_server_without_it_is_permanent(smtp_server: SmtpRecorder) -> None:
    config = SmtpConfig(host="127.0.0.1", port=smtp_server.port, sender="digest@headroom.example.com",
                        security="starttls")
    with pytest.raises(PermanentSendError, match="STARTTLS|starttls"):
        send_message(config, _message(), ["ops@example.com"])
    assert smtp_server.received == []


def test_config_from_settings_defaults_ports_and_hides_the_password() -> None:
    assert config_from_settings(Settings(HEADROOM_SMTP_HOST="")) is None
    cases = {"starttls": 587, "ssl": 465, "none": 25}
    for security, port in cases.items():
        config = config_from_settings(Settings(HEADROOM_SMTP_HOST="mail.example.com", HEADROOM_SMTP_SECURITY=security,
                                               HEADROOM_SMTP_PASSWORD="pw-never-shown"))
        assert config is not None and config.port == port and config.password == "pw-never-shown"
        assert "pw-never-shown" not in repr(config)
    explicit = config_from_settings(Settings(HEADROOM_SMTP_HOST="mail.example.com", HEADROOM_SMTP_PORT="2525"))
    assert explicit is not None and explicit.port == 2525


def test_a_transient_reply_is_retried_within_the_call(smtp_server: SmtpRecorder) -> None:
    config = SmtpConfig(host="127.0.0.1", port=smtp_server.port, sender="digest@headroom.example.com", security="none")
    smtp_server.reply = "451 4.3.0 try again later"
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:  # the server recovers while the sender waits
        sleeps.append(seconds)
        smtp_server.reply = None

    send_message(config, _message(), ["ops@example.com"], sleep=sleep)
    assert len(sleeps) == 1 and 0 <= sleeps[0] <= 1.0
    assert [r.rcpt_tos for r in smtp_server.received] == [["ops@example.com"]]


def test_a_transient_reply_that_stays_is_raised_after_the_attempts(smtp_server: SmtpRecorder) -> None:
    from headroom.platform.smtp import SEND_RETRY, TransientSendError

    config = SmtpConfig(host="127.0.0.1", port=smtp_server.port, sender="digest@headroom.example.com", security="none")
    smtp_server.reply = "451 4.3.0 try again later"
    sleeps: list[float] = []
    with pytest.raises(TransientSendError, match="451"):
        send_message(config, _message(), ["ops@example.com"], sleep=sleeps.append)
    assert len(sleeps) == SEND_RETRY.attempts - 1 == 2 and smtp_server.received == []

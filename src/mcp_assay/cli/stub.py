"""``mcp-assay stub``: the key and the server of the stand-in authorization server.

``init`` creates the signing key the target is configured to trust; ``serve`` keeps the stub's
metadata and key set up between runs, for a target that fetches keys only when it starts (a run
serves them itself otherwise, and uses a ``serve`` it finds on the port). A served stub also lets a
real MCP client complete OAuth against it (registration, authorization code with PKCE, refresh).
"""

from __future__ import annotations

import threading
from pathlib import Path

import click

from mcp_assay.cli.command import AssayCommand, environment
from mcp_assay.cli.params import Checked, WritableFile, readable_file
from mcp_assay.suite.config import read_config_file
from mcp_assay.suite.stub.config import DEFAULT_LISTEN, StubConfig, parse_stub
from mcp_assay.suite.stub.keys import SigningKey
from mcp_assay.suite.stub.server import StubServer
from mcp_assay.userinput.values import HOST_PORT

__all__ = ["stub_group"]


@click.group("stub", short_help="Serve a stand-in authorization server for the token probes.")
def stub_group() -> None:
    """The stand-in authorization server for the token-validation probes (AUTH-16..19)."""


@stub_group.command(
    "init",
    cls=AssayCommand,
    short_help="Create the stub's signing key; say what the target must trust.",
    reads=(("--key-file FILE", "whether it exists: an existing key is kept unless --force."), environment()),
)
@click.option(
    "--key-file",
    type=WritableFile(path_type=Path),
    required=True,
    envvar="MCP_ASSAY_STUB_KEY_FILE",
    show_envvar=True,
    help="Where to write the RSA signing key (PEM).",
)
@click.option("--force", is_flag=True, envvar="MCP_ASSAY_STUB_FORCE", show_envvar=True,
              help="Replace an existing key (the target must then fetch the new key set).")  # fmt: skip
def init_command(key_file: Path, force: bool) -> None:
    """Create the stub's signing key and print what the target must trust."""
    path = key_file.expanduser()
    if path.exists() and not force:
        raise click.UsageError(f"--key-file {key_file}: exists; pass --force to replace it")
    key = SigningKey.generate()
    key.save(path)
    click.echo(f"signing key written to {path} (kid {key.kid})")
    click.echo(
        f"the target trusts tokens from issuer http://{DEFAULT_LISTEN} with keys at http://{DEFAULT_LISTEN}/jwks.json"
    )
    click.echo("(or wherever the config's stub.listen / stub.issuer say)")


@stub_group.command(
    "serve",
    cls=AssayCommand,
    short_help="Serve the stub's metadata, keys and OAuth endpoints.",
    reads=(
        ("--config FILE", "its stub section (YAML) and the signing key its key_file names (PEM)."),
        ("--key-file FILE", "or the signing key alone (PEM), served on --listen."),
        ("network", "the requests of the target and of OAuth clients to the stub's address."),
        environment(),
    ),
)
@click.option(
    "--config",
    "config_file",
    type=readable_file(path_type=Path),
    envvar="MCP_ASSAY_CONFIG",
    show_envvar=True,
    help="The config file whose stub section to serve.",
)
@click.option(
    "--key-file", type=readable_file(), envvar="MCP_ASSAY_STUB_KEY_FILE", show_envvar=True,
    help="Or: the signing key (PEM).",
)  # fmt: skip
@click.option("--listen", default=DEFAULT_LISTEN, show_default=True, envvar="MCP_ASSAY_STUB_LISTEN",
              show_envvar=True, type=Checked(HOST_PORT, "host:port", keep=True),
              help="HOST:PORT, with --key-file.")  # fmt: skip
def serve_command(config_file: Path | None, key_file: str | None, listen: str) -> None:
    """Serve the stub's metadata, key set and OAuth endpoints until interrupted."""
    stub: StubConfig | None
    if config_file is not None:
        stub = read_config_file(config_file).get("stub")
        if stub is None:
            raise click.UsageError(f"--config {config_file}: has no stub section")
    elif key_file:
        stub = parse_stub({"key_file": key_file, "listen": listen}, "the command line")
    else:
        raise click.UsageError("give --config FILE (with a stub section) or --key-file PATH")
    assert stub is not None
    try:
        server = StubServer(
            stub.host, stub.port, stub.issuer, stub.key, SigningKey.generate(), stub.all_scopes, policy=stub.policy
        )
    except OSError as exc:
        raise click.UsageError(f"cannot listen on {stub.host}:{stub.port} ({exc.strerror or exc})") from None
    click.echo(f"stub authorization server: issuer {stub.issuer}, keys at {stub.jwks_uri} (kid {stub.key.kid})")
    policy = stub.policy
    click.echo(f"grants offered: {', '.join(policy.grant_types)}")
    if policy.registration:
        public = " (every one as a public authorization_code client)" if policy.public_registration else ""
        click.echo(f"OAuth clients register at {stub.issuer}/register{public}")
    if policy.refused_grants:
        click.echo(f"the token endpoint refuses {', '.join(policy.refused_grants)} all the same (unauthorized_client)")
    consent = "are granted at once (auto-consent)" if policy.consent == "grant" else "are denied (consent: deny)"
    click.echo(f"authorization requests {consent}")
    click.echo("Ctrl-C to stop", err=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()

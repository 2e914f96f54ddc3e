"""Credentials of self-hosted services, backups, home automation and crypto wallets, written after
the detectors and scored blind once (a twenty-third set beside `later_forms.py`'s nine and the
later ones).

Backups (restic, Borg, Kopia, duplicity), media and download servers' configs (Sonarr's
`config.xml`, Transmission's `settings.json`, qBittorrent, Plex's `Preferences.xml`, Jellyfin),
home automation (ESPHome, Tasmota's console, Zigbee2MQTT, Mosquitto, Node-RED), self-hosted
services' environment (Pi-hole, Vaultwarden, Authelia, Syncthing), dynamic DNS clients
(ddclient, DuckDNS), tunnels (cloudflared), cameras' RTSP URLs, MQTT URLs; wallets and chains:
a `.env`'s `PRIVATE_KEY=0x…`, Hardhat's `accounts`, a seed phrase in a note, `bitcoin.conf`'s
`rpcpassword`, a node provider's key in its URL. Values come from `later_forms.py`'s generator
(its `R`, reseeded each round by its `score`).

    python -m benchmarks.privacy.later_homelab [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import base64
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, R, an, hexs, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("homelab", FORMS)

# Words of a seed phrase (BIP-39's list holds 2,048; these are some of them).
_SEED_WORDS = [
    "abandon",
    "ability",
    "able",
    "about",
    "above",
    "absent",
    "absorb",
    "abstract",
    "absurd",
    "abuse",
    "access",
    "accident",
    "account",
    "accuse",
    "achieve",
    "acid",
    "acoustic",
    "acquire",
    "across",
    "act",
    "action",
    "actor",
    "actress",
    "actual",
    "adapt",
    "add",
    "addict",
    "address",
    "adjust",
    "admit",
    "adult",
    "advance",
    "advice",
    "aerobic",
    "affair",
    "afford",
    "afraid",
    "again",
    "age",
    "agent",
    "agree",
    "ahead",
    "aim",
    "air",
    "airport",
    "aisle",
    "alarm",
    "album",
    "alcohol",
    "alert",
    "alien",
    "all",
    "alley",
    "allow",
    "almost",
    "alone",
    "alpha",
    "already",
    "also",
    "alter",
    "always",
    "amateur",
    "amazing",
    "among",
    "amount",
    "amused",
    "analyst",
    "anchor",
    "ancient",
    "anger",
    "angle",
    "angry",
    "animal",
    "ankle",
    "announce",
    "annual",
    "another",
    "answer",
    "antenna",
    "antique",
    "anxiety",
    "any",
    "apart",
]


def b64(n: int) -> str:
    return base64.b64encode(bytes(R.getrandbits(8) for _ in range(n))).decode()


@form
def restic_env() -> Form:
    p = pw()
    return (
        f"export RESTIC_REPOSITORY=s3:s3.amazonaws.com/backups-nas\nexport RESTIC_PASSWORD='{p}'\nrestic snapshots",
        [p],
    )


@form
def borg_passphrase() -> Form:
    p = pw()
    return f"BORG_PASSPHRASE={p} borg create --stats ::'{{hostname}}-{{now}}' /srv/data", [p]


@form
def kopia_connect() -> Form:
    p = pw()
    return f"kopia repository connect s3 --bucket=nas-backup --access-key=AKIAEXAMPLE --password={p}", [p]


@form
def duplicity_passphrase() -> Form:
    p = pw()
    return f"PASSPHRASE='{p}' duplicity /home/me b2://keyid:appkey@bucket/laptop", [p]


@form
def sonarr_config() -> Form:
    key = hexs(32)
    return (
        f"<Config>\n  <Port>8989</Port>\n  <UrlBase></UrlBase>\n  <ApiKey>{key}</ApiKey>\n"
        "  <AuthenticationMethod>Forms</AuthenticationMethod>\n</Config>",
        [key],
    )


@form
def transmission_settings() -> Form:
    p = pw()
    return (
        '{\n    "rpc-authentication-required": true,\n    "rpc-enabled": true,\n'
        f'    "rpc-password": "{p}",\n    "rpc-port": 9091,\n    "rpc-username": "media"\n}}',
        [p],
    )


@form
def qbittorrent_cli() -> Form:
    p = pw()
    return (
        f'curl -i --data "username=admin&password={p}" http://nas.local:8080/api/v2/auth/login',
        [p],
    )


@form
def plex_preferences() -> Form:
    token = an(20)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<Preferences MachineIdentifier="a1b2" '
        f'PlexOnlineToken="{token}" PlexOnlineUsername="me" FriendlyName="nas"/>',
        [token],
    )


@form
def jellyfin_api() -> Form:
    key = hexs(32)
    return f'curl -H "X-Emby-Token: {key}" http://nas.local:8096/Items?Recursive=true', [key]


@form
def esphome_yaml() -> Form:
    key = b64(32)
    p = pw()
    return (
        "esphome:\n  name: porch-light\napi:\n  encryption:\n"
        f'    key: "{key}"\nota:\n  - platform: esphome\n    password: "{p}"\n',
        [key, p],
    )


@form
def tasmota_console() -> Form:
    p = pw()
    return f"Backlog MqttHost 192.168.1.20; MqttUser tasmota; MqttPassword {p}; Restart 1", [p]


@form
def zigbee2mqtt_config() -> Form:
    key = ", ".join(str(R.randrange(256)) for _ in range(16))
    p = pw()
    return (
        f"mqtt:\n  server: mqtt://localhost\n  user: z2m\n  password: {p}\nadvanced:\n  network_key: [{key}]\n",
        [p],
    )


@form
def mosquitto_pub() -> Form:
    p = pw()
    return f"mosquitto_pub -h broker.local -u sensors -P '{p}' -t home/porch -m on", [p]


@form
def node_red_settings() -> Form:
    secret = an(24)
    return f'module.exports = {{\n    uiPort: 1880,\n    credentialSecret: "{secret}",\n}}', [secret]


@form
def pihole_env() -> Form:
    p = pw()
    return (
        "services:\n  pihole:\n    image: pihole/pihole:latest\n    environment:\n"
        f"      TZ: Europe/Berlin\n      WEBPASSWORD: '{p}'\n",
        [p],
    )


@form
def vaultwarden_env() -> Form:
    token = b64(48)
    return f"DOMAIN=https://vault.example.org\nSIGNUPS_ALLOWED=false\nADMIN_TOKEN={token}", [token]


@form
def authelia_config() -> Form:
    secret = an(64)
    return (
        f"identity_validation:\n  reset_password:\n    jwt_secret: '{secret}'\nsession:\n  name: authelia_session\n",
        [secret],
    )


@form
def syncthing_config() -> Form:
    key = an(32)
    return (
        f'<gui enabled="true" tls="false">\n    <address>127.0.0.1:8384</address>\n    <apikey>{key}</apikey>\n</gui>',
        [key],
    )


@form
def ddclient_conf() -> Form:
    p = pw()
    return (
        f"protocol=dyndns2\nuse=web\nserver=domains.google.com\nlogin=abc123\npassword='{p}'\nhome.example.org",
        [p],
    )


@form
def duckdns_cron() -> Form:
    token = "-".join(hexs(n) for n in (8, 4, 4, 4, 12))
    return (
        f'*/5 * * * * curl -s "https://www.duckdns.org/update?domains=myhome&token={token}&ip=" >/dev/null',
        [token],
    )


@form
def cloudflared_token() -> Form:
    token = "eyJhIjoi" + an(120)
    return f"cloudflared tunnel --no-autoupdate run --token {token}", [token]


@form
def rtsp_camera() -> Form:
    p = pw().replace("@", "").replace("/", "").replace(":", "")
    return f"ffmpeg -rtsp_transport tcp -i rtsp://admin:{p}@192.168.1.64:554/Streaming/Channels/101 -t 10 out.mp4", [p]


@form
def mqtt_url() -> Form:
    p = an(16)
    return f"MQTT_URL=mqtts://homeassistant:{p}@mqtt.example.org:8883", [p]


@form
def eth_private_key_env() -> Form:
    key = "0x" + hexs(64)
    return f"RPC_URL=https://sepolia.example.org\nPRIVATE_KEY={key}\nETHERSCAN_KEY=none", [key]


@form
def hardhat_accounts() -> Form:
    key = "0x" + hexs(64)
    return (
        "module.exports = {\n  solidity: '0.8.24',\n  networks: {\n    sepolia: {\n"
        f"      url: RPC_URL,\n      accounts: ['{key}'],\n    }},\n  }},\n}};",
        [key],
    )


@form
def seed_phrase_note() -> Form:
    words = " ".join(R.choice(_SEED_WORDS) for _ in range(12))
    return f"backup of the test wallet, seed phrase: {words}\n(do not lose this)", [words]


@form
def bitcoin_conf() -> Form:
    p = an(24)
    return f"server=1\ntxindex=1\nrpcuser=btcrpc\nrpcpassword={p}\nrpcallowip=127.0.0.1", [p]


@form
def node_provider_url() -> Form:
    key = an(32)
    return f"const provider = new JsonRpcProvider('https://eth-mainnet.g.alchemy.com/v2/{key}');", [key]


def main(argv: list[str] | None = None) -> None:
    set_main("homelab", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()

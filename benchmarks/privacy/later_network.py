"""Credentials in network devices' and infrastructure services' configurations, written after the
detectors and scored blind once (an eighteenth set beside `later_forms.py`'s nine and the later
ones).

Cisco IOS (`enable secret`, `username … password 7 …`, SNMP communities, a RADIUS or TACACS+
key, an OSPF or BGP neighbour's key, a VTY line's password), Juniper's `encrypted-password` and
its `$9$` secrets, Arista's `secret sha512`, a MikroTik `/user add`, FortiGate's `set passwd
ENC`, a WireGuard peer's private and preshared keys, an IPsec PSK in `ipsec.secrets` and in
strongSwan's `swanctl.conf`, an OpenVPN static key's hex lines, hostapd's `wpa_passphrase`,
NetworkManager's `psk=`, FreeRADIUS's `clients.conf` secret, keepalived's `auth_pass`, a
Terraform state's sensitive attribute, Pulumi's `secure:` config value, an Ansible inventory's
`ansible_become_pass`, a Kubernetes `kubeadm join` token and CA hash. Values come from
`later_forms.py`'s generator (its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 59 of 78 values (0.756). Missed: a
RADIUS or TACACS+ server's `key` on a line of its own, a BGP neighbour's password with a `%` in
it, OSPF's `message-digest-key 1 md5 X`, Junos' `$9$` secrets, FortiGate's `set password ENC X`,
OpenVPN's static key block, Pulumi's `secure: v1:…` values. Rules since
(router/privacy/network_secrets.py): 75 of 78; Pulumi's values are ciphertext its stack's key
decrypts (as an Ansible vault's are), left.

    python -m benchmarks.privacy.later_network [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import json
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, an, hexs, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("network", FORMS)


def _b64(n: int) -> str:
    return an(n - 1) + "="


@form
def ios_enable_secret() -> Form:
    h = "$1$" + an(4) + "$" + an(22)
    return f"!\nhostname core-sw1\nenable secret 5 {h}\n!", [h]


@form
def ios_username_type7() -> Form:
    t7 = "0822" + hexs(16).upper()
    return f"username netops privilege 15 password 7 {t7}\n", [t7]


@form
def ios_snmp_community() -> Form:
    community = an(14)
    return f"snmp-server community {community} RO 10\nsnmp-server location DC1-R12\n", [community]


@form
def ios_radius_key() -> Form:
    key = pw()
    return f"radius server ISE01\n address ipv4 10.20.0.5 auth-port 1812 acct-port 1813\n key {key}\n", [key]


@form
def ios_tacacs_key() -> Form:
    key = pw()
    return f"tacacs-server host 10.20.0.9 key {key}\n", [key]


@form
def ios_bgp_password() -> Form:
    key = pw()
    return f"router bgp 65001\n neighbor 192.0.2.1 remote-as 65002\n neighbor 192.0.2.1 password {key}\n", [key]


@form
def ios_vty_password() -> Form:
    key = pw()
    return f"line vty 0 4\n password {key}\n login\n transport input ssh\n", [key]


@form
def ospf_md5() -> Form:
    key = pw()
    return f"interface Gi0/1\n ip ospf message-digest-key 1 md5 {key}\n", [key]


@form
def junos_encrypted_password() -> Form:
    h = "$6$" + an(8) + "$" + an(86)
    return (
        "system {\n    login {\n        user netops {\n            class super-user;\n"
        f'            authentication {{\n                encrypted-password "{h}";\n            }}\n        }}\n    }}\n}}',
        [h],
    )


@form
def junos_dollar9() -> Form:
    secret = "$9$" + an(24)
    return (
        f'protocols {{\n    bgp {{\n        group ebgp {{\n            authentication-key "{secret}"; ## SECRET-DATA\n        }}\n    }}\n}}',
        [secret],
    )


@form
def arista_secret() -> Form:
    h = "$6$" + an(16) + "$" + an(86)
    return f"username admin privilege 15 role network-admin secret sha512 {h}\n", [h]


@form
def mikrotik_user() -> Form:
    p = pw()
    return f'/user add name=backup group=read password="{p}" comment="nightly export"', [p]


@form
def fortigate_passwd() -> Form:
    enc = "ENC " + _b64(60)
    return (
        f'config system admin\n    edit "admin"\n        set accprofile "super_admin"\n        set password {enc}\n    next\nend',
        [enc[4:]],
    )


@form
def wireguard_peer() -> Form:
    private, preshared = _b64(44), _b64(44)
    public = _b64(44)
    return (
        f"[Interface]\nAddress = 10.8.0.2/24\nPrivateKey = {private}\n\n"
        f"[Peer]\nPublicKey = {public}\nPresharedKey = {preshared}\nEndpoint = vpn.example.com:51820\n",
        [private, preshared],
    )


@form
def ipsec_secrets() -> Form:
    psk = pw()
    return f'# /etc/ipsec.secrets\n203.0.113.10 198.51.100.20 : PSK "{psk}"\n', [psk]


@form
def swanctl_conf() -> Form:
    psk = pw()
    return f"secrets {{\n    ike-site-b {{\n        id = site-b.example.com\n        secret = {psk}\n    }}\n}}\n", [
        psk
    ]


@form
def openvpn_static_key() -> Form:
    lines = [hexs(32) for _ in range(4)]
    return (
        "#\n# 2048 bit OpenVPN static key\n#\n-----BEGIN OpenVPN Static key V1-----\n"
        + "\n".join(lines)
        + "\n-----END OpenVPN Static key V1-----\n",
        [lines[0]],
    )


@form
def hostapd() -> Form:
    p = pw()
    return f"interface=wlan0\nssid=office-guest\nwpa=2\nwpa_key_mgmt=WPA-PSK\nwpa_passphrase={p}\n", [p]


@form
def networkmanager() -> Form:
    p = pw()
    return f"[wifi]\nmode=infrastructure\nssid=HQ-Staff\n\n[wifi-security]\nkey-mgmt=wpa-psk\npsk={p}\n", [p]


@form
def freeradius_clients() -> Form:
    secret = pw()
    return f"client core-switches {{\n    ipaddr = 10.20.0.0/24\n    secret = {secret}\n    shortname = core\n}}\n", [
        secret
    ]


@form
def keepalived() -> Form:
    p = an(8)
    return (
        "vrrp_instance VI_1 {\n    state MASTER\n    interface eth0\n    virtual_router_id 51\n"
        f"    authentication {{\n        auth_type PASS\n        auth_pass {p}\n    }}\n}}\n",
        [p],
    )


@form
def terraform_state() -> Form:
    p = pw()
    state = {
        "resources": [
            {
                "type": "aws_db_instance",
                "name": "main",
                "instances": [{"attributes": {"username": "dbadmin", "password": p, "engine": "postgres"}}],
            }
        ]
    }
    return json.dumps(state, indent=2), [p]


@form
def pulumi_secure() -> Form:
    value = "v1:" + _b64(24) + ":" + _b64(48)
    return f"config:\n  aws:region: eu-west-1\n  app:dbPassword:\n    secure: {value}\n", [value]


@form
def ansible_inventory() -> Form:
    p = pw()
    return f"[db]\ndb01 ansible_host=10.0.4.11 ansible_user=deploy ansible_become_pass={p}\n", [p]


@form
def kubeadm_join() -> Form:
    token = f"{an(6).lower()}.{an(16).lower()}"
    return (
        f"kubeadm join 10.0.0.10:6443 --token {token} \\\n    --discovery-token-ca-cert-hash sha256:{hexs(64)}",
        [token],
    )


def main(argv: list[str] | None = None) -> None:
    set_main("network", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()

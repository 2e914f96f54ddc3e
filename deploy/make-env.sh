#!/usr/bin/env sh
# Writes deploy/.env with random secrets for the compose stack, once: an existing .env is kept
# (a new vault key would make what Redis holds unreadable). Prints the client key to use.
set -eu
cd "$(dirname "$0")"
if [ -f .env ]; then
  echo "deploy/.env exists; keeping it"
else
  umask 077
  random() { python3 -c 'import secrets; print(secrets.token_urlsafe(32).replace("-", "").replace("_", ""))'; }
  {
    echo "TANDEM_CLIENT_KEY=tk-$(random)"
    echo "REDIS_PASSWORD=$(random)"
    # The vault key is 32 random bytes in base64 (AES-256-GCM).
    echo "TANDEM_VAULT_KEY=$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())')"
    echo "GRAFANA_ADMIN_PASSWORD=$(random)"
  } > .env
  echo "wrote deploy/.env"
fi
grep '^TANDEM_CLIENT_KEY=' .env | sed 's/^TANDEM_CLIENT_KEY=/agents send this API key: /'

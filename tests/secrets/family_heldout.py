"""The held-out set: written before the rules were tuned, and never tuned on.

Only ``bench/secrets_quality.py --heldout`` reads it, and it prints rates, not the
misses. Its wordings, syntaxes and prose are deliberately different from the
development set in ``family_cases``; the values come from the same generators
(with their own seed), because those model what real passwords and keys look like.
"""

from __future__ import annotations

from tests.secrets.family_corpus import Labelled, Template, generate, neg, pos

SEED = "heldout-2026"

URL = "url-credentials"
CONN = "connection-string-password"

TEMPLATES: list[Template] = [
    # --- credentials in URLs and connection strings ---
    pos(
        "url",
        URL,
        "SQLALCHEMY_DATABASE_URI=postgresql+psycopg2://{u}:{s}@{h}:5432/{db}",
        "urlpassword",
    ),
    pos(
        "url",
        URL,
        "mongo_uri: mongodb+srv://{u}:{s}@cluster0.{corp}.mongodb.net/{db}?w=majority",
        "urlpassword",
    ),
    pos("url", URL, "broker_url = 'amqps://{u}:{s}@mq.{corp}.io:5671/%2F'", "urlpassword"),
    pos(
        "url",
        URL,
        "git remote set-url origin https://{u}:{s}@git.{corp}.com/platform/api.git",
        "urlpassword",
    ),
    pos(
        "url",
        URL,
        "The replica is reachable at mysql://{u}:{s}@{h}/{db} from the bastion only.",
        "urlpassword",
        code=False,
    ),
    pos(
        "url",
        URL,
        "Celery 结果后端改成了 redis://:{s}@{h}:6380/2 ，旧的已经停用。",
        "urlpassword",
        code=False,
    ),
    pos(
        "url",
        URL,
        'dsn := "{u}:{s}@tcp({h}:3306)/{db}?charset=utf8mb4&parseTime=True"',
        "urlpassword",
    ),
    pos(
        "url", CONN, "jdbc:mysql://{h}:3306/{db}?useSSL=false&user={u}&password={s}", "urlpassword"
    ),
    pos(
        "url",
        CONN,
        "spring.datasource.url=jdbc:sqlserver://{h}:1433;databaseName={db};"
        "user={u};password={s};encrypt=true",
        "urlpassword",
    ),
    pos(
        "url",
        CONN,
        '"ConnectionStrings": {"Main": "Server={h};Database={db};User Id={u};'
        'Password={s};TrustServerCertificate=True"}',
        "urlpassword",
    ),
    pos(
        "url",
        CONN,
        "Driver={ODBC Driver 17 for SQL Server};Server=tcp:{h},1433;Database={db};Uid={u};Pwd={s};",
        "urlpassword",
    ),
    pos(
        "url",
        CONN,
        'conn = psycopg2.connect("host={h} dbname={db} user={u} password={s}")',
        "urlpassword",
    ),
    pos(
        "url",
        CONN,
        "Export link that still works: https://reports.{corp}.com/export.csv?"
        "user={u}&passwd={s}&fmt=csv",
        "urlpassword",
        code=False,
    ),
    pos(
        "url",
        CONN,
        "Provider=OraOLEDB.Oracle;Data Source=ORCL;User Id={u};Password={s};",
        "urlpassword",
    ),
    # harmless look-alikes of URLs
    neg("url", "DATABASE_URL=postgres://{u}:${DB_PASSWORD}@{h}:5432/{db}"),
    neg("url", "jdbc:postgresql://{h}:5432/{db}?user={u}&password=${PGPASS}&ssl=true"),
    neg(
        "url",
        "Clone with https://{u}@bitbucket.org/{corp}/infra.git and paste the app password "
        "when asked.",
        code=False,
    ),
    neg("url", "Server={h};Database={db};Integrated Security=SSPI;Encrypt=yes;"),
    neg("url", "mongodb://{u}:<password>@{h}:27017/?authSource=admin"),
    neg("url", "Local compose stack: postgresql://postgres:postgres@localhost:5432/{db}", False),
    neg(
        "url",
        "See https://{corp}.atlassian.net/wiki/spaces/OPS/pages/{acct}/Password+Policy "
        "for the rules.",
        code=False,
    ),
    neg(
        "url",
        "redis://{h}:6379/0 has no auth inside the VPC; 连接 redis://{h}:6379/1 也一样。",
        False,
    ),
    neg("url", 'psql "host={h} dbname={db} user={u} sslmode=verify-full passfile=~/.pgpass"'),
    neg("url", "git@github.com:{corp}/deploy.git and ssh://git@{h}:2222/{corp}/tools.git"),
    neg("url", 'DSN = "{u}:%s@tcp(%s:3306)/{db}" // filled from the secret store at boot'),
    neg(
        "url", "The docs show https://user:pass@proxy.example.com:3128 as the proxy format.", False
    ),
    # --- credential flags of command-line tools ---
    pos(
        "cli",
        "cli-password",
        "curl -sS -u {u}:{s} https://api.{corp}.com/v1/reports",
        "urlpassword",
    ),
    pos("cli", "cli-password", "curl --user '{u}:{s}' -X DELETE https://{h}/api/cache"),
    pos("cli", "cli-password", "mysql -h {h} -P 3306 -u{u} -p{s} {db} < fix.sql", "urlpassword"),
    pos("cli", "cli-password", "mysqldump --single-transaction -u {u} -p'{s}' {db} | gzip > d.gz"),
    pos("cli", "cli-password", "sshpass -p '{s}' scp backup.tar {u}@{h}:/srv/backups/"),
    pos("cli", "cli-password", "PGPASSWORD='{s}' pg_dump -h {h} -U {u} -Fc {db} > {db}.dump"),
    pos(
        "cli",
        "cli-password",
        "PGPASSWORD={s} psql -h {h} -U {u} -d {db} -c 'select 1'",
        "urlpassword",
    ),
    pos("cli", "cli-password", "docker login registry.{corp}.io -u {u} -p {s}", "urlpassword"),
    pos(
        "cli",
        "cli-password",
        "helm registry login harbor.{corp}.io --username {u} --password '{s}'",
    ),
    pos("cli", "cli-password", "sqlcmd -S {h} -U sa -P '{s}' -Q \"SELECT @@VERSION\""),
    pos("cli", "cli-password", "wget --user={u} --password='{s}' https://files.{corp}.com/a.zip"),
    pos(
        "cli",
        "cli-password",
        "昨天用 `mysql -u{u} -p{s} -h {h}` 登上去改的表。",
        "urlpassword",
        code=False,
    ),
    pos("cli", "cli-password", "redis-cli -h {h} -p 6379 -a '{s}' --no-auth-warning info"),
    pos(
        "cli",
        "cli-password",
        "mongosh \"mongodb://{h}:27017/{db}\" --username {u} --password '{s}'",
    ),
    neg("cli", "mysql -h {h} -u {u} -p {db}   # prompts for the password"),
    neg("cli", 'curl -u "$API_USER:$API_TOKEN" https://api.{corp}.com/v1/health'),
    neg("cli", 'echo "$CR_PAT" | docker login ghcr.io -u {u} --password-stdin'),
    neg("cli", "sshpass -f ~/.config/nas.pass rsync -a ./photos {u}@{h}:/volume1/photos"),
    neg("cli", 'PGPASSWORD="$(pass show db/{db})" psql -h {h} -U {u} {db}'),
    neg("cli", "ssh -p 2222 {u}@{h} 'sudo systemctl restart api'"),
    neg("cli", "docker run -d -p 8080:80 -p 8443:443 --name web nginx:1.27"),
    neg("cli", "mkdir -p /var/lib/{db} && cp -p app.conf /etc/{corp}/"),
    neg("cli", "psql -h {h} -U {u} -W {db}"),
    neg("cli", "curl -u {u}: https://api.{corp}.com/v1/ping   # empty password, token in header"),
    neg("cli", "redis-cli -a \"$REDIS_PASSWORD\" --scan --pattern 'session:*'"),
    neg("cli", "docker login -u {u} --password-stdin < ~/.docker/{corp}.token"),
    neg("cli", "./provision.sh --password-file /etc/{corp}/db.pass --env prod"),
    # --- credential keys of config files ---
    pos("config", "config-credential", "# redis.conf on {h}\nbind 0.0.0.0\nrequirepass {s}"),
    pos("config", "config-credential", 'replicaof {h} 6379\nmasterauth "{s}"'),
    pos("config", "generic-password", "machine ftp.{corp}.com\n  login {u}\n  password {s}"),
    pos("config", "generic-password", "machine api.{corp}.com login {u} password {s}"),
    pos("config", "config-credential", "~/.pgpass:\n{h}:5432:{db}:{u}:{s}", "urlpassword"),
    pos("config", "config-credential", "*:*:*:{u}:{s}", "urlpassword"),
    pos(
        "config",
        "generic-password",
        "[distutils]\nindex-servers = internal\n\n[internal]\n"
        "repository = https://pypi.{corp}.com/\nusername = {u}\npassword = {s}",
    ),
    pos("config", "config-credential", "//npm.{corp}.com/:_auth={s}", "dockerauth"),
    pos(
        "config",
        "config-credential",
        "registry=https://npm.{corp}.com/\n//npm.{corp}.com/:_authToken={s}\nalways-auth=true",
        "b64_32",
    ),
    pos(
        "config",
        "config-credential",
        '{\n  "auths": {\n    "registry.{corp}.io": {\n      "auth": "{s}"\n    }\n  }\n}',
        "dockerauth",
    ),
    pos(
        "config",
        "generic-password",
        "<servers>\n  <server>\n    <id>{corp}-releases</id>\n"
        "    <username>{u}</username>\n    <password>{s}</password>\n  </server>\n</servers>",
    ),
    pos("config", "generic-password", '[client]\nuser={u}\npassword="{s}"\nhost={h}'),
    pos(
        "config",
        "config-credential",
        "Redis 主从：从库配置 masterauth {s}，主库 requirepass 同一个。",
        "urlpassword",
        code=False,
    ),
    neg("config", "# requirepass foobared\nprotected-mode yes\nport 6379"),
    neg("config", 'requirepass ""\nmasterauth ""'),
    neg("config", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\nalways-auth=true"),
    neg("config", '{\n  "auths": {\n    "ghcr.io": {}\n  },\n  "credsStore": "osxkeychain"\n}'),
    neg("config", '{"credHelpers": {"{acct}.dkr.ecr.us-east-1.amazonaws.com": "ecr-login"}}'),
    neg(
        "config",
        "<server>\n  <id>central</id>\n  <username>${env.MAVEN_USER}</username>\n"
        "  <password>${env.MAVEN_PASSWORD}</password>\n</server>",
    ),
    neg(
        "config",
        "PasswordAuthentication no\nPermitRootLogin prohibit-password\nPubkeyAuthentication yes",
    ),
    neg("config", "password_encryption = scram-sha-256\nssl = on"),
    neg("config", "Set requirepass in /etc/redis/redis.conf, then restart redis.", code=False),
    neg("config", "localhost:5432:*:postgres:postgres"),
    neg("config", "[pypi]\nusername = __token__\n# password comes from keyring"),
    neg("config", "machine github.com\n  login {u}\n  password <personal-access-token>"),
    neg("config", "spring.datasource.password=${DB_PASSWORD:}\nspring.datasource.username={u}"),
    # --- framework signing secrets ---
    pos(
        "signing",
        "signing-secret",
        "# settings/prod.py\nDEBUG = False\nSECRET_KEY = '{s}'",
        "django",
    ),
    pos("signing", "signing-secret", 'SECRET_KEY = "{s}"', "django-insecure"),
    pos("signing", "signing-secret", 'app.config["SECRET_KEY"] = "{s}"', "hex32"),
    pos("signing", "signing-secret", "app.secret_key = '{s}'", "hex64"),
    pos("signing", "signing-secret", "production:\n  secret_key_base: {s}", "hex128"),
    pos(
        "signing", "signing-secret", "SECRET_KEY_BASE={s} bin/rails server -e production", "hex128"
    ),
    pos(
        "signing",
        "signing-secret",
        "APP_ENV=production\nAPP_KEY=base64:{s}\nAPP_DEBUG=false",
        "laravel",
    ),
    pos("signing", "signing-secret", "JWT_SECRET={s}", "alnum40"),
    pos(
        "signing",
        "signing-secret",
        "const token = jwt.sign({ uid }, '{s}', { expiresIn: '7d' });",
        "urlsafe43",
    ),
    pos(
        "signing",
        "signing-secret",
        'encoded = jwt.encode(payload, "{s}", algorithm="HS256")',
        "hex32",
    ),
    pos("signing", "signing-secret", "jwt:\n  secret: {s}\n  expiration: 86400", "b64_48"),
    pos(
        "signing",
        "signing-secret",
        "Django 生产环境的 SECRET_KEY 是 {s} ，改了会让所有会话失效。",
        "django",
        code=False,
    ),
    pos("signing", "signing-secret", "NEXTAUTH_SECRET={s}", "b64_32"),
    neg("signing", 'SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]'),
    neg("signing", 'SECRET_KEY = env.str("SECRET_KEY")\nALLOWED_HOSTS = env.list("HOSTS")'),
    neg("signing", 'production:\n  secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>'),
    neg("signing", "APP_KEY=\nAPP_DEBUG=true"),
    neg("signing", "php artisan key:generate --show"),
    neg("signing", "jwt.sign(payload, process.env.JWT_SECRET, { algorithm: 'HS256' })"),
    neg("signing", "app.secret_key = secrets.token_hex()"),
    neg("signing", "JWT_SECRET=change-me-in-production"),
    neg("signing", "SECRET_KEY_BASE=$(bin/rails secret)"),
    neg("signing", "The JWT secret lives in Vault; never put it in settings.py.", code=False),
    neg(
        "signing",
        "from django.core.management.utils import get_random_secret_key\n"
        "print(get_random_secret_key())",
    ),
    # --- provider secrets without a prefix, by key name or a companion id ---
    pos(
        "paired",
        "aws-secret-access-key",
        "aws_access_key_id = {aws_id}\naws_secret_access_key = {s}",
        "b64_40",
    ),
    pos(
        "paired",
        "aws-secret-access-key",
        "AWS Access Key ID [None]: {aws_id}\n"
        "AWS Secret Access Key [None]: {s}\nDefault region name [None]: eu-central-1",
        "b64_40",
    ),
    pos(
        "paired", "aws-secret-access-key", "Access key ID,Secret access key\n{aws_id},{s}", "b64_40"
    ),
    pos(
        "paired",
        "aws-secret-access-key",
        '{\n  "Credentials": {\n    "AccessKeyId": "{aws_id}",\n'
        '    "SecretAccessKey": "{s}",\n    "Expiration": "2026-01-01T00:00:00Z"\n  }\n}',
        "b64_40",
    ),
    pos(
        "paired",
        "aws-secret-access-key",
        's3 = boto3.client("s3", aws_access_key_id="{aws_id}", aws_secret_access_key="{s}")',
        "b64_40",
    ),
    pos(
        "paired",
        "aws-secret-access-key",
        "IAM user for the backup job: {aws_id} / {s}",
        "b64_40",
        code=False,
    ),
    pos(
        "paired",
        "twilio-auth-token",
        "TWILIO_ACCOUNT_SID={twilio_sid}\nTWILIO_AUTH_TOKEN={s}",
        "hex32",
    ),
    pos("paired", "twilio-auth-token", 'client = Client("{twilio_sid}", "{s}")', "hex32"),
    pos(
        "paired",
        "twilio-auth-token",
        "Twilio 账号 SID {twilio_sid}，Auth Token {s}",
        "hex32",
        code=False,
    ),
    pos(
        "paired",
        "alibaba-access-key-secret",
        "AccessKeyId: {ali_id}\nAccessKeySecret: {s}",
        "alnum30",
    ),
    pos(
        "paired",
        "alibaba-access-key-secret",
        "阿里云 RAM 子账号：AK {ali_id}，SK {s}",
        "alnum30",
        code=False,
    ),
    pos("paired", "tencent-secret-key", "SecretId={tc_id}\nSecretKey={s}", "alnum32"),
    pos(
        "paired",
        "algolia-admin-key",
        "ALGOLIA_APPLICATION_ID={algolia_app}\nALGOLIA_ADMIN_API_KEY={s}",
        "hex32",
    ),
    neg(
        "paired",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    neg("paired", "TWILIO_ACCOUNT_SID={twilio_sid}\nTWILIO_AUTH_TOKEN=${TWILIO_AUTH_TOKEN}"),
    neg("paired", "Message {twilio_sid} delivered; see commit {sha} for the retry fix.", False),
    neg(
        "paired",
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=$(aws configure get "
        "aws_secret_access_key)",
    ),
    neg(
        "paired",
        "Rotated the backup job's access key in commit {sha}; the old one is deactivated.",
        False,
    ),
    neg(
        "paired",
        '{\n  "UserId": "AIDA{algolia_app}ABCDEFGH",\n  "Account": "{acct}",\n'
        '  "Arn": "arn:aws:iam::{acct}:user/{u}"\n}',
    ),
    neg("paired", "ALGOLIA_APP_ID={algolia_app}\nALGOLIA_SEARCH_ONLY_KEY=${ALGOLIA_SEARCH_KEY}"),
    neg("paired", "阿里云 AccessKey 已经禁用，新的 AccessKey Secret 在 KMS 里。", False),
    neg("paired", "Call {twilio_sid} lasted {n}s, recording id {uuid}.", False),
    # --- passwords in prose, English and Chinese ---
    pos(
        "prose",
        "generic-password",
        "The router admin password is {s} (changed in March).",
        code=False,
    ),
    pos(
        "prose",
        "generic-password",
        "Wi-Fi for the office guests: network {corp}-guest, password {s}",
        code=False,
    ),
    pos(
        "prose",
        "generic-password",
        "I reset the Jenkins admin password to {s} after the lockout.",
        code=False,
    ),
    pos("prose", "generic-password", "Grafana login is {u} with password `{s}`.", code=False),
    pos("prose", "generic-password", "NAS root password: {s}", code=False),
    pos("prose", "generic-password", "路由器管理密码是 {s}", code=False),
    pos("prose", "generic-password", "测试机的 root 口令：{s}，用完记得改。", code=False),
    pos("prose", "generic-password", "VPN 账号 {u}，密码为{s}。", code=False),
    pos("prose", "generic-password", "把数据库密码改成了 {s} ，旧的作废。", code=False),
    pos("prose", "generic-password", "堡垒机口令为 {s}", code=False),
    pos(
        "prose",
        "generic-password",
        "The temporary password for {u}@{corp}.com is {s} — must change on first login.",
        code=False,
    ),
    neg("prose", "The admin password is rotated every 90 days by the vault job.", code=False),
    neg("prose", 'The password is stored in 1Password under "NAS root".', code=False),
    neg("prose", "密码是必填项，长度至少 12 位。", code=False),
    neg("prose", "口令：请找运维同事要，不要写在这里。", code=False),
    neg("prose", "数据库密码改成了新的那个，在密码管理器里。", code=False),
    neg(
        "prose",
        "Password must contain one digit and one symbol; the old one was too short.",
        code=False,
    ),
    neg("prose", "the password is wrong, so the login loops back to the form", code=False),
    neg(
        "prose",
        "Passwords are hashed with bcrypt (cost 12) before they reach the table.",
        code=False,
    ),
    neg("prose", "管理员密码为空时会进入初始化向导。", code=False),
    neg("prose", "The pass rate of the nightly suite is 98% since the fix.", code=False),
    neg(
        "prose",
        "Forgot-password emails now link to /reset?token=… and expire in an hour.",
        code=False,
    ),
    neg("prose", "WiFi 密码贴在打印机旁边的便签上。", code=False),
    # --- references to where a secret lives ---
    neg(
        "reference",
        "env:\n  DEPLOY_TOKEN: ${{ secrets.DEPLOY_TOKEN }}\n"
        "  DB_PASSWORD: ${{ secrets.PROD_DB_PASSWORD }}",
    ),
    neg("reference", 'export DB_PASSWORD="$(cat /run/secrets/db_password)"'),
    neg("reference", "RUN --mount=type=secret,id=npmrc,target=/root/.npmrc npm ci"),
    neg(
        "reference", "RUN --mount=type=secret,id=aws,env=AWS_SECRET_ACCESS_KEY aws s3 sync . s3://b"
    ),
    neg("reference", "vault kv get -field=password secret/data/prod/{db}"),
    neg("reference", "password: vault:secret/data/{corp}/db#password"),
    neg("reference", "arn:aws:secretsmanager:eu-west-1:{acct}:secret:prod/{db}/password-AbC123"),
    neg(
        "reference",
        "aws secretsmanager get-secret-value --secret-id prod/{db}/master --query SecretString",
    ),
    neg("reference", "valueFrom: arn:aws:ssm:us-east-1:{acct}:parameter/prod/api_token"),
    neg(
        "reference",
        "MasterUserPassword: '{{resolve:secretsmanager:prod/{db}:SecretString:password}}'",
    ),
    neg(
        "reference",
        "DB_PASSWORD=op://Production/{db}-db/password\nAPI_TOKEN=op://Dev/stripe/credential",
    ),
    neg(
        "reference",
        "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n"
        "        name: {db}-secrets\n        key: password",
    ),
    neg("reference", "gcloud secrets versions access latest --secret={db}-password"),
    neg("reference", "POSTGRES_PASSWORD_FILE: /run/secrets/postgres_password"),
    neg("reference", "数据库密码放在 Vault 的 secret/data/prod/{db} 下面，用 AppRole 取。", False),
    neg("reference", 'ansible_become_password: "{{ vault_become_password }}"'),
    # --- commands that generate keys ---
    neg("keygen", 'ssh-keygen -t ed25519 -C "{u}@{corp}" -f ~/.ssh/id_ed25519_{corp}'),
    neg("keygen", "ssh-keygen -t rsa -b 4096 -N '' -f ./deploy_key"),
    neg(
        "keygen",
        "openssl genrsa -out private.pem 4096\nopenssl rsa -in private.pem -pubout -out public.pem",
    ),
    neg(
        "keygen",
        "openssl req -x509 -newkey rsa:4096 -nodes -keyout key.pem -out cert.pem -days 365",
    ),
    neg("keygen", "wg genkey | tee privatekey | wg pubkey > publickey"),
    neg(
        "keygen",
        "gpg --full-generate-key\ngpg --armor --export-secret-keys {u}@{corp}.com > private.asc",
    ),
    neg("keygen", "gpg --batch --passphrase '' --quick-gen-key \"{u} <{u}@{corp}.com>\" ed25519"),
    neg("keygen", "openssl rand -base64 32 > /etc/{corp}/session.key"),
    neg("keygen", "age-keygen -o ~/.config/sops/age/keys.txt"),
    neg("keygen", "python -c 'import secrets; print(secrets.token_urlsafe(48))'"),
    neg("keygen", "生成新的部署密钥：`ssh-keygen -t ed25519 -f ~/.ssh/deploy_{corp}`", False),
    neg(
        "keygen",
        "keytool -genkeypair -alias {corp} -keyalg RSA -keystore keystore.jks "
        "-storepass:env KEYSTORE_PASS",
    ),
    # --- the harmless shapes that already hold ---
    neg("harmless", "export OPENAI_API_KEY=<your-token>\nexport DB_PASSWORD=changeme"),
    neg("harmless", "api_key: xxxxxxxxxxxxxxxxxxxxxxxx\npassword: '********'"),
    neg("harmless", "aws_access_key_id=AKIAIOSFODNN7EXAMPLE"),
    neg("harmless", "sha256: {hex64}  {corp}-cli-linux-amd64.tar.gz"),
    neg(
        "harmless",
        '"node_modules/left-pad": {\n  "resolved": "https://registry.npmjs.org/'
        'left-pad/-/left-pad-1.3.0.tgz",\n  "integrity": "sha512-{b64_64}"\n}',
    ),
    neg("harmless", '{corp}-sdk = {version = "2.1.0", hash = "sha256:{hex64}"}'),
    neg("harmless", "trace_id={uuid} request_id={uuid}", False),
    neg("harmless", "Bisected to {sha}; reverted in {sha7}.", False),
    neg("harmless", "![diagram](data:image/png;base64,{b64img})", False),
    neg("harmless", "token_type: bearer\nexpires_in: 3600\nscope: read:org"),
    neg("harmless", "密钥：在团队的密码管理器里，名字叫 {corp}-prod。", False),
]


def cases() -> list[Labelled]:
    return generate(TEMPLATES, per=6, seed=SEED)

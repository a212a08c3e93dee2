"""Labelled notes for the scanner: each rule's true positive in a realistic memory
(frontmatter, prose, a pasted .env or config block, Chinese text) and look-alike
negatives that must stay quiet. Fake tokens are assembled at run time.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.secrets.fake_tokens import (
    ALNUM,
    HEX,
    LOWER_ALNUM,
    bad_checksum,
    github,
    jwt,
    npm,
    pem,
    rand,
)

UPPER_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    rule: str | None = None  # expected rule; None: must stay quiet
    secret: str = ""  # the exact text the finding must cover


def note(body: str, summary: str = "setup notes", kind: str = "fact") -> str:
    return f"---\nid: facts/{kind}-note\nkind: {kind}\nsummary: {summary}\n---\n{body}\n"


def _pos(case_id: str, rule: str, secret: str, template: str) -> Case:
    return Case(case_id, template.format(s=secret), rule, secret)


def _base_positives() -> list[Case]:
    aws_id = "AK" + "IA" + rand("aws", 16, UPPER_B32)
    aws_secret = rand("aws-secret", 40, B64)
    ghp = github("gh1")
    gho = github("gh2", "gho")
    ghs = github("gh3", "ghs")
    fine = "github_" + "pat_" + rand("fg1", 22) + "_" + rand("fg2", 59)
    glpat = "gl" + "pat-" + rand("gl", 20, URLSAFE)
    slack = (
        "xo"
        + "xb-"
        + rand("sl1", 12, "0123456789")
        + "-"
        + rand("sl2", 13, "0123456789")
        + "-"
        + rand("sl3", 24)
    )
    webhook = (
        "https://hooks.slack.com/services/T"
        + rand("w1", 8, UPPER_B32)
        + "/B"
        + rand("w2", 10, UPPER_B32)
        + "/"
        + rand("w3", 24)
    )
    stripe = "sk" + "_live_" + rand("st", 24)
    rk = "rk" + "_live_" + rand("rk", 32)
    openai = "sk-" + "proj-" + rand("oa", 48, URLSAFE) + "T3Blbk" + "FJ" + rand("oa2", 48, URLSAFE)
    anthropic = "sk-" + "ant-api03-" + rand("an", 93, URLSAFE) + "AA"
    openrouter = "sk-" + "or-v1-" + rand("or", 64, HEX)
    groq = "gs" + "k_" + rand("gq", 52)
    pplx = "pp" + "lx-" + rand("px", 48)
    hf = "hf" + "_" + rand("hf", 34, ALNUM)
    r8 = "r8" + "_" + rand("r8", 37)
    deepseek = "sk-" + rand("ds", 32, HEX)
    gcp = "AI" + "za" + rand("gcp", 35, URLSAFE)
    azure_key = rand("az", 86, B64) + "=="
    sas_sig = rand("sas", 43, ALNUM) + "%3D"
    twilio = "S" + "K" + rand("tw", 32, HEX)
    sendgrid = "SG." + rand("sg1", 22, URLSAFE) + "." + rand("sg2", 43, URLSAFE)
    mailgun = "key-" + rand("mg", 32, HEX)
    npm_tok = npm("npm1")
    pypi = "pypi-" + "AgEIcHlwaS5vcmc" + rand("pypi", 70, URLSAFE)
    docker = "dckr_" + "pat_" + rand("dk", 27, URLSAFE)
    do_tok = "dop" + "_v1_" + rand("do", 64, HEX)
    heroku = "HRKU-" + "AA" + rand("hk", 58, URLSAFE)
    shopify = "shp" + "at_" + rand("sh", 32, HEX)
    sentry = "sntry" + "u_" + rand("se", 64, HEX)
    linear = "lin_" + "api_" + rand("li", 40)
    notion = "ntn_" + rand("nt1", 11, "0123456789") + rand("nt2", 35)
    vault = "hv" + "s." + rand("hv", 90, URLSAFE)
    grafana = "gl" + "sa_" + rand("gr1", 32) + "_" + rand("gr2", 8, HEX)
    databricks = "da" + "pi" + rand("db", 32, HEX)
    doppler = "dp." + "pt." + rand("dp", 43)
    pulumi = "pul-" + rand("pu", 40, HEX)
    tfc = rand("tf1", 14) + ".atlas" + "v1." + rand("tf2", 67, URLSAFE)
    cloudflare = rand("cf", 40, URLSAFE)
    datadog = rand("dd", 32, HEX)
    atlassian = "ATATT3" + rand("at", 186, URLSAFE)
    tailscale = "tskey-" + "auth-" + rand("ts1", 12) + "-" + rand("ts2", 32)
    supabase = "sb" + "p_" + rand("sb", 40, HEX)
    telegram = rand("tg1", 10, "123456789") + ":AA" + rand("tg2", 33, URLSAFE)
    discord = (
        "M"
        + rand("dc1", 25, URLSAFE)
        + "."
        + rand("dc2", 6, URLSAFE)
        + "."
        + rand("dc3", 38, URLSAFE)
    )
    token_jwt = jwt({"sub": "svc-deploy", "role": "service_role", "iat": 1700000000}, "j1")
    pem_rsa = pem("RSA", "p1")
    pem_ssh = pem("OPENSSH", "p2")
    pem_json = pem("", "p3", escaped=True)
    age = "AGE-SECRET-KEY-1" + rand("age", 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
    db_pw = rand("dbpw", 14) + "#!"
    url_pw = rand("urlpw", 16)
    tencent = "AK" + "ID" + rand("tc", 32)
    aliyun = "LT" + "AI" + rand("ali", 20)

    return [
        _pos(
            "aws-id-env",
            "aws-access-key-id",
            aws_id,
            note(
                "Deploy creds from the old laptop:\n\n```\nAWS_ACCESS_KEY_ID={s}\nAWS_REGION=eu-west-1\n```"
            ),
        ),
        _pos(
            "aws-secret-ini",
            "aws-secret-access-key",
            aws_secret,
            note(
                "~/.aws/credentials on the CI box:\n\n    [default]\n    aws_secret_access_key = {s}\n"
            ),
        ),
        _pos(
            "github-pat-prose",
            "github-token",
            ghp,
            note("Pushed with my token {s} because SSH was blocked."),
        ),
        _pos(
            "github-oauth-json",
            "github-token",
            gho,
            note('gh auth status dumped `{{"oauth_token": "{s}"}}`.'),
        ),
        _pos(
            "github-app-yaml",
            "github-token",
            ghs,
            "---\nid: facts/ci\nci_token: {s}\n---\nInstallation token for the bot.\n",
        ),
        _pos("github-fine-grained", "github-fine-grained-pat", fine, note("export GH_TOKEN={s}")),
        _pos(
            "gitlab-pat",
            "gitlab-token",
            glpat,
            note("git remote uses glab with {s} (expires Friday)."),
        ),
        _pos("slack-bot-token", "slack-token", slack, note("SLACK_BOT_TOKEN={s}")),
        _pos("slack-webhook", "slack-webhook-url", webhook, note("Alerts post to {s} from cron.")),
        _pos(
            "stripe-live",
            "stripe-secret-key",
            stripe,
            note("Stripe live key for the billing worker: `{s}`"),
        ),
        _pos("stripe-restricted", "stripe-secret-key", rk, note('STRIPE_RESTRICTED_KEY="{s}"')),
        _pos("openai-project", "openai-api-key", openai, note("OPENAI_API_KEY={s}")),
        _pos(
            "anthropic",
            "anthropic-api-key",
            anthropic,
            note("Claude key for the eval harness: {s}"),
        ),
        _pos("openrouter", "openrouter-api-key", openrouter, note("OpenRouter: {s}")),
        _pos("groq", "groq-api-key", groq, note("groq: {s}")),
        _pos("perplexity", "perplexity-api-key", pplx, note("PPLX_API_KEY={s}")),
        _pos("huggingface", "huggingface-token", hf, note("huggingface-cli login --token {s}")),
        _pos("replicate", "replicate-api-token", r8, note("REPLICATE_API_TOKEN={s}")),
        _pos(
            "deepseek-zh",
            "llm-api-key",
            deepseek,
            note("DeepSeek 的 API 密钥：{s}，充值了 50 元。", "模型密钥"),
        ),
        _pos("gcp-api-key", "gcp-api-key", gcp, note("Maps key (server side, unrestricted!): {s}")),
        _pos(
            "gcp-service-account",
            "private-key",
            pem_json.split("\\n")[0],
            note(
                'service-account.json:\n{{\n  "type": "service_account",\n  "private_key_id": "'
                + rand("pk", 40, HEX)
                + '",\n  "private_key": "'
                + pem_json
                + '\\n"\n}}'
            ),
        ),
        _pos(
            "azure-storage",
            "azure-storage-key",
            azure_key,
            note(
                "DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey={s};EndpointSuffix=core.windows.net"
            ),
        ),
        _pos(
            "azure-sas",
            "azure-sas-token",
            sas_sig,
            note(
                "https://prodlogs.blob.core.windows.net/dumps?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig={s}"
            ),
        ),
        _pos(
            "twilio",
            "twilio-api-key",
            twilio,
            note("Twilio API key SID/secret pair starts with {s}"),
        ),
        _pos("sendgrid", "sendgrid-api-key", sendgrid, note("SENDGRID_API_KEY={s}")),
        _pos("mailgun", "mailgun-api-key", mailgun, note("mailgun: {s}")),
        _pos("npm", "npm-token", npm_tok, note("//registry.npmjs.org/:_authToken={s}")),
        _pos("pypi", "pypi-token", pypi, note("[pypi]\n  username = __token__\n  password = {s}")),
        _pos(
            "dockerhub",
            "dockerhub-token",
            docker,
            note("docker login -u acme --password-stdin <<< {s}"),
        ),
        _pos("digitalocean", "digitalocean-token", do_tok, note("doctl auth init -t {s}")),
        _pos("heroku", "heroku-api-key", heroku, note("HEROKU_API_KEY={s}")),
        _pos("shopify", "shopify-token", shopify, note("Shopify admin token {s}")),
        _pos("sentry", "sentry-token", sentry, note("SENTRY_AUTH_TOKEN={s}")),
        _pos("linear", "linear-api-key", linear, note("Linear: {s}")),
        _pos("notion", "notion-token", notion, note("Notion integration secret {s}")),
        _pos("vault", "vault-token", vault, note("VAULT_TOKEN={s} vault kv get secret/app")),
        _pos("grafana", "grafana-service-account-token", grafana, note("grafana sa token: {s}")),
        _pos(
            "databricks", "databricks-token", databricks, note("databricks configure --token {s}")
        ),
        _pos("doppler", "doppler-token", doppler, note("DOPPLER_TOKEN={s}")),
        _pos("pulumi", "pulumi-token", pulumi, note("PULUMI_ACCESS_TOKEN={s}")),
        _pos(
            "terraform-cloud",
            "terraform-cloud-token",
            tfc,
            note('credentials "app.terraform.io" {{\n  token = "{s}"\n}}'),
        ),
        _pos("cloudflare", "cloudflare-api-token", cloudflare, note("CLOUDFLARE_API_TOKEN={s}")),
        _pos("datadog", "datadog-api-key", datadog, note("DD_API_KEY={s}")),
        _pos("atlassian", "atlassian-api-token", atlassian, note("Jira API token: {s}")),
        _pos("tailscale", "tailscale-key", tailscale, note("tailscale up --authkey={s}")),
        _pos("supabase", "supabase-token", supabase, note("supabase login --token {s}")),
        _pos("telegram", "telegram-bot-token", telegram, note("Bot token from BotFather: {s}")),
        _pos("discord", "discord-bot-token", discord, note("DISCORD_TOKEN={s}")),
        _pos("jwt-service-role", "jwt", token_jwt, note("SUPABASE_SERVICE_ROLE_KEY={s}")),
        Case("pem-rsa", note(f"Deploy key:\n\n{pem_rsa}\n"), "private-key", pem_rsa.split("\n")[0]),
        Case(
            "openssh",
            note(f"~/.ssh/id_ed25519 backup:\n{pem_ssh}"),
            "private-key",
            pem_ssh.split("\n")[0],
        ),
        _pos(
            "age",
            "age-secret-key",
            age,
            note("# created: 2024-03-01\n# public key: age1examplepublic\n{s}"),
        ),
        _pos("tencent", "tencent-secret-id", tencent, note("腾讯云 SecretId: {s}")),
        _pos("aliyun", "alibaba-access-key-id", aliyun, note("阿里云 AccessKey ID：{s}")),
        # generic layer
        _pos(
            "env-password",
            "generic-password",
            db_pw,
            note("Pasted .env:\n\n```\nDB_HOST=db.internal\nDB_USER=app\nDB_PASSWORD={s}\n```"),
        ),
        _pos(
            "yaml-password",
            "generic-password",
            db_pw,
            "---\nid: facts/db\n---\n```yaml\ndatabase:\n  host: pg.prod.acme.io\n  password: {s}\n```\n",
        ),
        _pos(
            "json-secret",
            "generic-secret",
            rand("cs", 34, URLSAFE),
            note('```json\n{{"client_id": "web", "client_secret": "{s}"}}\n```'),
        ),
        _pos("shell-export", "generic-secret", rand("ex", 40), note("export SERVICE_TOKEN={s}")),
        _pos(
            "cli-flag",
            "cli-password",
            "Kx7!" + rand("cli", 10),
            note("mysqldump --password={s} prod > dump.sql"),
        ),
        _pos(
            "cli-flag-space",
            "generic-secret",
            rand("cli2", 32),
            note("./deploy --api-key {s} --env prod"),
        ),
        _pos(
            "prose-password",
            "generic-password",
            "Winter" + rand("pr", 4, "0123456789") + "!",
            note("The staging admin password is {s} until we rotate it."),
        ),
        _pos(
            "zh-password",
            "generic-password",
            rand("zh", 12) + "@",
            note("服务器 root 密码：{s}", "服务器登录"),
        ),
        _pos(
            "zh-password-is",
            "generic-password",
            rand("zh2", 10) + "#9",
            note("测试环境数据库密码是 {s} ，别外传。"),
        ),
        _pos("zh-token", "generic-secret", rand("zh3", 32), note("内部网关令牌：{s}")),
        _pos(
            "zh-secret",
            "generic-secret",
            rand("zh4", 24, LOWER_ALNUM),
            note("企业微信应用密钥 = {s}"),
        ),
        _pos("md-bold", "generic-password", rand("md", 12) + "$", note("**Password:** {s}")),
        _pos("xml", "generic-password", rand("xml", 12) + "%", note("<password>{s}</password>")),
        _pos(
            "bearer",
            "generic-secret",
            rand("br", 40, URLSAFE),
            note('curl -H "Authorization: Bearer {s}" https://api.internal/v1'),
        ),
        _pos(
            "url-postgres",
            "url-credentials",
            url_pw,
            note("DATABASE_URL=postgres://app:{s}@pg.prod.acme.io:5432/app"),
        ),
        _pos(
            "url-redis", "url-credentials", url_pw, note("redis://:{s}@cache.prod.acme.io:6379/0")
        ),
        _pos(
            "url-git",
            "url-credentials",
            url_pw,
            note("git clone https://deploy:{s}@git.acme.io/infra.git"),
        ),
        _pos(
            "url-amqp-encoded",
            "url-credentials",
            "p%40" + url_pw,
            note("amqp://svc:{s}@mq.acme.io/vhost"),
        ),
        _pos(
            "dotnet-conn",
            "connection-string-password",
            db_pw,
            note("Server=sql01;User Id=sa;Password={s};Database=prod"),
        ),
    ]


def _base_negatives() -> list[Case]:
    sha = rand("sha", 40, HEX)
    return [
        Case(
            "aws-doc-example",
            note(
                "The docs use AKIAIOSFODNN7EXAMPLE and wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY as examples."
            ),
        ),
        Case(
            "sk-placeholder",
            note("Set OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx in your shell."),
        ),
        Case("angle-placeholder", note("export GITHUB_TOKEN=<YOUR_TOKEN>")),
        Case(
            "env-reference",
            note("password: ${DB_PASSWORD}\ntoken: $TOKEN\napi_key: os.environ['API_KEY']"),
        ),
        Case("masked", note("DB_PASSWORD=********\nAPI_KEY=sk-...\n")),
        Case(
            "local-default-url",
            note("DATABASE_URL=postgres://postgres:postgres@localhost:5432/app"),
        ),
        Case(
            "compose-default",
            note("```yaml\nenvironment:\n  POSTGRES_PASSWORD: changeme  # example\n```"),
        ),
        Case("doc-url", note("Format: https://user:password@example.com/path")),
        Case(
            "public-key",
            note("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rand("pub", 43, B64) + " me@laptop"),
        ),
        Case(
            "pem-public",
            note(
                "-----BEGIN PUBLIC KEY-----\n"
                + rand("pubkey", 64, B64)
                + "\n-----END PUBLIC KEY-----"
            ),
        ),
        Case("git-sha", note(f"Fixed in commit {sha}; see also {sha[:7]}.")),
        Case("uuid", note("request id 3f2b9c1e-8a4d-4f6b-9c2e-1a7d5e8b0c3f failed")),
        Case("sri", note('<script integrity="sha384-' + rand("sri", 64, B64) + '"></script>')),
        Case(
            "lockfile",
            note(
                'resolved "https://registry.npmjs.org/x/-/x-1.0.0.tgz"\nintegrity sha512-'
                + rand("lock", 86, B64)
                + "=="
            ),
        ),
        Case("publishable", note("STRIPE_PUBLISHABLE_KEY=pk_live_" + rand("pk", 24))),
        Case(
            "supabase-anon",
            note("SUPABASE_ANON_KEY=" + jwt({"role": "anon", "iss": "supabase"}, "anon")),
        ),
        Case(
            "pem-header-prose",
            note("If you see `-----BEGIN RSA PRIVATE KEY-----` in a log, rotate the key."),
        ),
        Case(
            "prose-tokens",
            note(
                "Tokens expire after 30 minutes; the password policy requires 12 characters. 密钥需要每季度轮换一次。"
            ),
        ),
        Case("prose-zh", note("令牌桶限流；密钥对用 ed25519 生成；密码学课程笔记。")),
        Case("max-tokens", note("max_tokens: 4096\ntoken_budget: 128000\npassword_min_length: 12")),
        Case(
            "password-hash-field",
            note("password_hash: argon2id\ntoken_url: https://auth.acme.io/token"),
        ),
        Case("github-bad-checksum", note("Example token: " + bad_checksum(github("bad")))),
        Case("npm-bad-checksum", note("NPM_TOKEN=" + bad_checksum(npm("badnpm")))),
        Case(
            "github-doc-example",
            note("GitHub shows ghp_16C7e42F292c6912E7710c838347Ae178B4a in its docs."),
        ),
        Case(
            "identifier-values",
            note("password: get_password\ntoken: settings.API_TOKEN\nsecret: self.client_secret"),
        ),
        Case("keyboard-prose", note("Press the key: Enter. The monkey key is hot.")),
        Case(
            "vault-ref",
            note(
                'password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\ndb_password: "{{ vault_db_password }}"'
            ),
        ),
        Case("password-prompt", note('"password": "Enter your password"')),
        Case("k8s-secret-ref", note("secretKeyRef:\n  name: db-secret\n  key: password")),
        Case("placeholder-here", note("API_KEY=your-api-key-here\nSECRET_KEY=change_me")),
        Case(
            "stripe-doc",
            note("Stripe's docs show sk_test_4eC39HqLyjWDarjtT1zdp7dc in every sample."),
        ),
        Case(
            "commands", note("Run `pwd` then `git log --oneline`; the auth flow uses OAuth2 PKCE.")
        ),
        Case(
            "file-paths",
            note(
                "ssh_key: ~/.ssh/id_ed25519\ncredentials_file: /etc/app/creds.json\nkey_file: ./certs/server.key"
            ),
        ),
    ]


def positives() -> list[Case]:
    return _base_positives() + _more_positives() + table_and_cli_cases()[0]


def negatives() -> list[Case]:
    return _base_negatives() + _more_negatives() + table_and_cli_cases()[1]


def _more_positives() -> list[Case]:
    db_pw = rand("dbpw", 14) + "#!"
    url_pw = rand("urlpw", 16)
    return [
        _pos(  # ends in '!' like TypeScript's non-null process.env.X!, yet two words: a password
            "dotted-password-bang",
            "generic-password",
            "Summer.Time!",
            note("DB_PASSWORD={s}"),
        ),
        _pos(
            "prose-api-key",
            "generic-secret",
            rand("ak", 32),
            note("The Mistral API key is `{s}` (team account)."),
        ),
        _pos(
            "prose-for-clause",
            "generic-password",
            "Qz" + rand("fc", 8) + "!7",
            note("Password for the admin console: {s}"),
        ),
        _pos(
            "netrc-space",
            "config-credential",
            "Ab1$" + rand("nr", 10),
            note("machine ftp.acme.io login deploy password {s}"),
        ),
        _pos(
            "next-line", "generic-password", rand("nl", 12) + "%4", note("VPN password:\n    {s}\n")
        ),
        _pos(
            "mysql-p",
            "cli-password",
            "Tq9" + rand("my", 9) + "#",
            note("mysql -h db.prod -u root -p{s} app"),
        ),
        _pos(
            "sshpass",
            "cli-password",
            "Lm4" + rand("sp", 9) + "&",
            note("sshpass -p '{s}' ssh ops@10.0.3.7"),
        ),
        _pos(
            "curl-user",
            "cli-password",
            "Vb7" + rand("cu", 9) + "!",
            note("curl -u admin:{s} https://jenkins.acme.io/api/json"),
        ),
        _pos(
            "auth-pair",
            "generic-secret",
            "deploy:" + "Kp2" + rand("ap", 9) + "@x",
            note("basic auth: {s}"),
        ),
        _pos(
            "zh-set-to",
            "generic-password",
            rand("zs", 10) + "#3",
            note("把路由器管理密码改为 {s} 了。"),
        ),
        _pos(
            "zh-space", "generic-password", rand("zp", 10) + "!8", note("邮箱 ops@acme.io 密码 {s}")
        ),
        _pos(
            "wireguard",
            "generic-secret",
            rand("wg", 43, B64) + "=",
            note("[Interface]\nPrivateKey = {s}\nAddress = 10.8.0.2/24"),
        ),
        _pos("totp", "generic-secret", rand("totp", 16, UPPER_B32), note("2FA secret: {s}")),
        _pos(
            "k8s-b64",
            "generic-password",
            "UzNjcjN0LVByMGQtIzIwMjQ=",
            note("```yaml\nkind: Secret\ndata:\n  DB_PASSWORD: {s}\n```"),
        ),
        _pos(
            "query-param",
            "generic-secret",
            rand("qp", 32),
            note("GET https://api.acme.io/v2/items?api_key={s}&page=2"),
        ),
        _pos(
            "mongodb-srv",
            "url-credentials",
            url_pw,
            note("mongodb+srv://svc:{s}@cluster0.ab1cd.mongodb.net/prod"),
        ),
        _pos(
            "url-remote-weak",
            "url-credentials",
            "admin123",
            note("ftp://backup:{s}@files.acme-corp.net/nightly"),
        ),
        _pos(
            "jdbc-password-param",
            "connection-string-password",
            db_pw,
            note("jdbc:postgresql://pg.acme.io:5432/app?user=app&password={s}&ssl=true"),
        ),
    ]


def _more_negatives() -> list[Case]:
    return [
        Case(
            "k8s-b64-placeholder",
            note("```yaml\nkind: Secret\ndata:\n  password: cGFzc3dvcmQ=\n```"),
        ),
        Case(
            "firebase-public",
            note("NEXT_PUBLIC_FIREBASE_API_KEY=AI" + "za" + rand("fb", 35, URLSAFE)),
        ),
        Case("ssh-pubkey-blob", note("ssh_key: AAAAC3NzaC1lZDI1NTE5AAAAI" + rand("pub2", 43, B64))),
        Case(
            "yaml-mapping-after-colon",
            note("```yaml\npassword:\n  secretKeyRef:\n    name: db\n```"),
        ),
        Case(
            "password-prose-space",
            note(
                "Use the password manager; password rotation is quarterly; password hashing uses argon2."
            ),
        ),
        Case("mysql-prompt", note("mysql -u root -p app  # prompts for the password")),
        Case(
            "code-snippets",
            note(
                "```python\ntoken = jwt.encode(payload, key)\npassword = request.form['password']\napi_key: str | None = None\nsecret = secrets.token_hex(32)\n```"
            ),
        ),
        Case(
            "zh-prose-connectors", note("令牌是短期有效的；密码为空时会报错；密钥设置为自动轮换。")
        ),
        Case("sample-uuid", note("api_key: 123e4567-e89b-12d3-a456-426614174000")),
        Case("doc-host-url", note("mysql://root:S3cr3t!x@db.example.com/app")),
        Case(
            "weak-local-url",
            note("amqp://guest:guest@localhost:5672/ and redis://:redis@127.0.0.1:6379"),
        ),
        Case("api-key-heading", note("## API key rotation\n\nRotate the API key every 90 days.")),
        Case(
            "tokenizer-config",
            note('"bos_token": "<s>",\n"pad_token_id": 0,\n"tokenizer_class": "LlamaTokenizer"'),
        ),
        Case(  # PHP's superglobals and arrays (was flagged generic-password)
            "php-env-subscript",
            note(
                "```php\n$password = $_ENV['DB_PASSWORD'];\n"
                "$token = $_SERVER[\"API_TOKEN\"];\n$secret = $config['auth']['secret'];\n```"
            ),
        ),
        Case(  # TypeScript's non-null assertion after a reference (was flagged generic-secret)
            "ts-non-null-env",
            note(
                "```ts\nconst apiKey = process.env.OPENAI_API_KEY!;\n"
                "const secret: string = config.auth.jwtSecret!\n```"
            ),
        ),
    ]


def table_and_cli_cases() -> tuple[list[Case], list[Case]]:
    found = [
        _pos(
            "table-column",
            "generic-password",
            "Hx8!" + rand("tb", 8),
            note("| 环境 | 用户 | 密码 |\n|---|---|---|\n| prod | admin | `{s}` |"),
        ),
        _pos("xai", "prefixed-api-token", "xai-" + rand("xai", 80), note("XAI_API_KEY={s}")),
        _pos(
            "tavily-zh",
            "prefixed-api-token",
            "tvly-" + rand("tv", 32),
            note("Tavily 搜索用 {s} 这个 key"),
        ),
        _pos(
            "docker-login",
            "cli-password",
            "Zx9$" + rand("dl", 8),
            note("docker login -u acme -p {s} registry.acme.io"),
        ),
    ]
    quiet = [
        Case("empty-assignments", note("password= token= secret=\nDB_PASSWORD=\nAPI_KEY=")),
        Case("php-builtins", note("'sodium_crypto_pwhash_scryptsalsa208sha256_str_verify',")),
        Case("chunk-hash", note("The bundle is chunk-" + rand("ch", 32, HEX) + ".js now.")),
        Case(
            "table-harmless",
            note("| Token | Expires |\n| --- | --- |\n| rotating | 1h |\n| refresh | 30d |"),
        ),
    ]
    return found, quiet

//! The host app's sign-in on the binary: keys made here, a JWKS served by a local endpoint,
//! bearer JWTs (RS256, ES256, EdDSA from the JWKS; HS256 from a shared secret) standing for
//! players wherever a player token does, with `players/me`; every refusal with its reason and
//! nothing created by a refused token; keys rotated; a JWKS that is down, slow or garbage leaving
//! the last good keys in use; bad flags refused at start.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;
use tonic::Code;
use unoflip::proto as pb;
use unoflip::proto::find_match_response::Update;
use unoflip::service::accounts::players::identity_player;
use unoflip::service::accounts::sign_in::Identity;

use super::harness::*;
use crate::kit::{Answer, Endpoint, binary};

const ISSUER: &str = "https://id.example.test/";
const AUDIENCE: &str = "unoflip-app";
const SECRET: &str = "a shared secret of more than thirty-two bytes";

fn temp_dir(label: &str) -> PathBuf {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!(
        "unoflip-sign-in-{label}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A private key made by openssl (`genpkey` `args`), and its PEM.
fn make_key(dir: &Path, file: &str, args: &[&str]) -> Vec<u8> {
    let status = Command::new("openssl")
        .arg("genpkey")
        .args(args)
        .args(["-out", file])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("openssl runs (apt-get install openssl)");
    assert!(status.success(), "openssl genpkey {args:?}");
    std::fs::read(dir.join(file)).unwrap()
}

/// A signing key of the host's identity provider.
struct Signer {
    kid: String,
    alg: Algorithm,
    key: EncodingKey,
}

impl Signer {
    fn rsa(dir: &Path, kid: &str) -> Signer {
        let pem = make_key(
            dir,
            &format!("{kid}.pem"),
            &["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
        );
        Signer {
            kid: kid.into(),
            alg: Algorithm::RS256,
            key: EncodingKey::from_rsa_pem(&pem).unwrap(),
        }
    }

    fn ec(dir: &Path, kid: &str) -> Signer {
        let pem = make_key(
            dir,
            &format!("{kid}.pem"),
            &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
        );
        Signer {
            kid: kid.into(),
            alg: Algorithm::ES256,
            key: EncodingKey::from_ec_pem(&pem).unwrap(),
        }
    }

    fn ed(dir: &Path, kid: &str) -> Signer {
        let pem = make_key(dir, &format!("{kid}.pem"), &["-algorithm", "ED25519"]);
        Signer {
            kid: kid.into(),
            alg: Algorithm::EdDSA,
            key: EncodingKey::from_ed_pem(&pem).unwrap(),
        }
    }

    fn hs() -> Signer {
        Signer {
            kid: "shared".into(),
            alg: Algorithm::HS256,
            key: EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
        }
    }

    /// Its public key as a JWK.
    fn jwk(&self) -> Jwk {
        let mut jwk = Jwk::from_encoding_key(&self.key, self.alg).unwrap();
        jwk.common.key_id = Some(self.kid.clone());
        jwk
    }

    /// A token of `claims`, signed.
    fn sign(&self, claims: &serde_json::Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.key).unwrap()
    }
}

fn now() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap()
}

/// Claims that pass for `sub`.
fn claims(sub: &str, name: &str) -> serde_json::Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "name": name,
           "iat": now(), "exp": now() + 3600})
}

fn jwks(signers: &[&Signer]) -> String {
    serde_json::to_string(&JwkSet {
        keys: signers.iter().map(|s| s.jwk()).collect(),
    })
    .unwrap()
}

fn unsigned(header: &serde_json::Value, claims: &serde_json::Value) -> String {
    use base64::Engine;
    let b64 = |v: &serde_json::Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(serde_json::to_vec(v).unwrap())
    };
    format!("{}.{}.", b64(header), b64(claims))
}

async fn get_player(
    client: &mut Client,
    name: &str,
    token: &str,
) -> Result<pb::Player, tonic::Status> {
    Ok(client
        .get_player(authed(pb::GetPlayerRequest { name: name.into() }, token))
        .await?
        .into_inner()
        .player
        .unwrap())
}

async fn my_games(
    client: &mut Client,
    player: &str,
    token: &str,
) -> Result<Vec<pb::PlayerGame>, tonic::Status> {
    Ok(client
        .list_my_games(authed(
            pb::ListMyGamesRequest {
                player: player.into(),
                page_size: 0,
            },
            token,
        ))
        .await?
        .into_inner()
        .games)
}

fn player_of(sub: &str) -> String {
    identity_player(&Identity {
        issuer: ISSUER.into(),
        subject: sub.into(),
        display_name: None,
    })
}

async fn metrics(port: u16) -> String {
    super::edge::http(port, "GET", "/metrics", "").await.1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_jwt_stands_for_a_player_wherever_a_player_token_does() {
    let dir = temp_dir("players");
    let (rsa, ec, ed) = (
        Signer::rsa(&dir, "rsa-1"),
        Signer::ec(&dir, "ec-1"),
        Signer::ed(&dir, "ed-1"),
    );
    let hs = Signer::hs();
    let endpoint = Endpoint::start(Answer::Ok(jwks(&[&rsa, &ec, &ed]))).await;
    let jwks_url = endpoint.url("/.well-known/jwks.json");
    let server = Server::start(
        &temp_sqlite("sign-in"),
        &[
            "--auth-jwks",
            &jwks_url,
            "--auth-hs256-secret",
            SECRET,
            "--auth-issuer",
            ISSUER,
            "--auth-audience",
            AUDIENCE,
            "--bot-delay-ms",
            "0",
        ],
    )
    .await;
    let mut client = server.client().await;

    // One subject, four algorithms: one player, created on first use, named by the claim.
    let ada = rsa.sign(&claims("user-ada", "Ada Host"));
    let me = get_player(&mut client, "players/me", &ada).await.unwrap();
    assert_eq!(me.name, player_of("user-ada"));
    assert_eq!(me.display_name, "Ada Host");
    for signer in [&ec, &ed, &hs] {
        let token = signer.sign(&claims("user-ada", "Ada Host"));
        let again = get_player(&mut client, "players/me", &token).await.unwrap();
        assert_eq!(again, me, "{:?}", signer.alg);
    }
    // The host renames the user: the player follows.
    let renamed = rsa.sign(&claims("user-ada", "Ada <Renamed>"));
    let after = get_player(&mut client, "players/me", &renamed)
        .await
        .unwrap();
    assert_eq!(
        after.display_name, "Ada Renamed",
        "tidied to the name rules"
    );
    // Anyone may read a player by name, as before.
    let read = client
        .get_player(pb::GetPlayerRequest {
            name: me.name.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .player
        .unwrap();
    assert_eq!(read.display_name, "Ada Renamed");

    // JoinGame as players/me, then ListMyGames gives the same seat and token back, by
    // players/me and by the player's own name, with a fresh token of another algorithm.
    let game = create(&mut client, options(2)).await.unwrap().name;
    let joined = client
        .join_game(authed(
            pb::JoinGameRequest {
                game: game.clone(),
                seat: None,
                player_name: String::new(),
                player: "players/me".into(),
            },
            &ada,
        ))
        .await
        .unwrap()
        .into_inner();
    let seat = joined.game.as_ref().unwrap().seats[joined.seat as usize].clone();
    assert_eq!(seat.player, me.name);
    // The name of the token presented (an older one, still valid) is the player's again.
    assert_eq!(seat.player_name, "Ada Host");
    let fresh = ec.sign(&claims("user-ada", "Ada Renamed"));
    for name in ["players/me", me.name.as_str()] {
        let games = my_games(&mut client, name, &fresh).await.unwrap();
        assert_eq!(games.len(), 1, "{name}");
        assert_eq!(games[0].game.as_ref().unwrap().name, game);
        assert_eq!(games[0].seat_token, joined.seat_token, "{name}");
    }
    // Joining again (another device) gets the same seat and token.
    let again = client
        .join_game(authed(
            pb::JoinGameRequest {
                game: game.clone(),
                seat: None,
                player_name: String::new(),
                player: "players/me".into(),
            },
            &fresh,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (again.seat, &again.seat_token),
        (joined.seat, &joined.seat_token)
    );
    // The seat token is the seat's: the lobby is told apart from a token no game knows.
    for (token, expected) in [
        (joined.seat_token.as_str(), "GAME_NOT_STARTED"),
        ("0123abcd", "SEAT_TOKEN_INVALID"),
    ] {
        let answer = client
            .get_view(authed(pb::GetViewRequest { game: game.clone() }, token))
            .await
            .unwrap_err();
        assert_eq!(reason(&answer), expected);
    }

    // FindMatch as players/me, filled with a bot at once.
    let mut stream = client
        .find_match(authed(
            pb::FindMatchRequest {
                player: "players/me".into(),
                options: Some(options(2)),
                bot_fill: true,
                bot_fill_after_seconds: 0,
                fill_levels: Vec::new(),
            },
            &ada,
        ))
        .await
        .unwrap()
        .into_inner();
    let found = loop {
        let message = tokio::time::timeout(Duration::from_secs(20), stream.message())
            .await
            .expect("a match within 20 s")
            .unwrap()
            .expect("the stream ended without a match");
        if let Some(Update::Found(found)) = message.update {
            break found;
        }
    };
    let matched = found.game.unwrap();
    assert_eq!(matched.seats[found.seat as usize].player, me.name);
    let games = my_games(&mut client, "players/me", &ada).await.unwrap();
    assert_eq!(games.len(), 2);
    assert_eq!(games[0].seat_token, found.seat_token, "newest first");

    // A player token keeps working beside JWTs, and names its player as players/me too.
    let registered = client
        .register_player(pb::RegisterPlayerRequest {
            display_name: "Bo".into(),
            bot: false,
        })
        .await
        .unwrap()
        .into_inner();
    let bo = registered.player.unwrap();
    let by_token = get_player(&mut client, "players/me", &registered.player_token)
        .await
        .unwrap();
    assert_eq!(by_token, bo);
    // A JWT does not act as another player, nor a player token as the JWT's.
    let refused = my_games(&mut client, &bo.name, &ada).await.unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused)),
        (Code::Unauthenticated, "PLAYER_TOKEN_INVALID".into()),
        "{refused:?}"
    );
    let refused = my_games(&mut client, &me.name, &registered.player_token)
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "PLAYER_TOKEN_INVALID");
    // players/me without a token.
    let refused = client
        .get_player(pb::GetPlayerRequest {
            name: "players/me".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "PLAYER_TOKEN_INVALID");

    // Every bad token is refused with its reason, and creates no player.
    let other_rsa = Signer::rsa(&dir, "rsa-1");
    let mut bad = claims("user-bad", "Mallory");
    let with = |key: &str, value: serde_json::Value| {
        let mut c = claims("user-bad", "Mallory");
        c[key] = value;
        c
    };
    let mut tampered = rsa.sign(&claims("user-bad", "Mallory"));
    tampered.truncate(tampered.len() - 4);
    tampered.push_str("AAAA");
    bad["exp"] = json!(now() - 3600);
    // HS256 signed with the RSA public key's JWK text as the secret: the classic confusion.
    let public_as_secret = jsonwebtoken::encode(
        &Header {
            kid: Some("rsa-1".into()),
            ..Header::new(Algorithm::HS256)
        },
        &claims("user-bad", "Mallory"),
        &EncodingKey::from_secret(serde_json::to_string(&rsa.jwk()).unwrap().as_bytes()).unwrap(),
    )
    .unwrap();
    // An RS256 header naming the EC key.
    let wrong_family = {
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some("ec-1".into());
        jsonwebtoken::encode(&header, &claims("user-bad", "Mallory"), &rsa.key).unwrap()
    };
    let no_sub = {
        let mut c = claims("user-bad", "Mallory");
        c.as_object_mut().unwrap().remove("sub");
        rsa.sign(&c)
    };
    let cases: Vec<(&str, String, &str)> = vec![
        ("expired", rsa.sign(&bad), "TOKEN_EXPIRED"),
        (
            "not yet valid",
            rsa.sign(&with("nbf", json!(now() + 3600))),
            "TOKEN_NOT_YET_VALID",
        ),
        (
            "other audience",
            ec.sign(&with("aud", json!("another-app"))),
            "TOKEN_AUDIENCE_INVALID",
        ),
        (
            "other issuer",
            ed.sign(&with("iss", json!("https://evil.example/"))),
            "TOKEN_ISSUER_INVALID",
        ),
        ("tampered", tampered, "TOKEN_SIGNATURE_INVALID"),
        (
            "another key of the same kid",
            other_rsa.sign(&claims("user-bad", "Mallory")),
            "TOKEN_SIGNATURE_INVALID",
        ),
        (
            "alg none",
            unsigned(
                &json!({"alg": "none", "typ": "JWT"}),
                &claims("user-bad", "Mallory"),
            ),
            "TOKEN_ALGORITHM_NOT_ALLOWED",
        ),
        (
            "HS256 with the public key as secret",
            public_as_secret,
            "TOKEN_SIGNATURE_INVALID",
        ),
        (
            "RS256 naming an EC key",
            wrong_family,
            "TOKEN_ALGORITHM_NOT_ALLOWED",
        ),
        (
            "unknown key",
            Signer {
                kid: "nobody".into(),
                ..Signer::ec(&dir, "ec-x")
            }
            .sign(&claims("user-bad", "Mallory")),
            "TOKEN_KEY_UNKNOWN",
        ),
        ("no sub", no_sub, "TOKEN_CLAIM_MISSING"),
        (
            "oversized",
            rsa.sign(&with("pad", json!("x".repeat(9000)))),
            "TOKEN_MALFORMED",
        ),
        ("garbage", "eyJhbGciOi.garbage.x".into(), "TOKEN_MALFORMED"),
    ];
    for (what, token, expected) in cases {
        let refused = get_player(&mut client, "players/me", &token)
            .await
            .unwrap_err();
        assert_eq!(
            (refused.code(), reason(&refused).as_str()),
            (Code::Unauthenticated, expected),
            "{what}: {refused:?}"
        );
        let refused = my_games(&mut client, "players/me", &token)
            .await
            .unwrap_err();
        assert_eq!(reason(&refused), expected, "{what} (ListMyGames)");
    }
    let nobody = client
        .get_player(pb::GetPlayerRequest {
            name: player_of("user-bad"),
        })
        .await
        .unwrap_err();
    assert_eq!(
        reason(&nobody),
        "PLAYER_NOT_FOUND",
        "no refused token made a player"
    );
    let text = metrics(server.port).await;
    assert!(
        text.contains(r#"unoflip_refusals_total{reason="TOKEN_EXPIRED"} 2"#),
        "{text}"
    );
    // The game joined above is as it was.
    assert_eq!(get_game(&mut client, &game).await.seats[1].player, "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_rotate_and_a_jwks_that_fails_leaves_the_last_good_keys_in_use() {
    let dir = temp_dir("rotate");
    let (old, new) = (Signer::rsa(&dir, "old"), Signer::ed(&dir, "new"));
    // The JWKS is down when the server starts: it starts anyway and says so per token.
    let endpoint = Endpoint::start(Answer::Status(503)).await;
    let server = Server::start(
        "memory",
        &[
            "--auth-jwks",
            &endpoint.url("/jwks"),
            "--auth-jwks-refresh",
            "1s",
            "--auth-issuer",
            ISSUER,
            "--auth-audience",
            AUDIENCE,
        ],
    )
    .await;
    let mut client = server.client().await;
    let token = old.sign(&claims("user-rot", "Rot"));
    let refused = get_player(&mut client, "players/me", &token)
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::Unavailable, "SIGN_IN_UNAVAILABLE"),
        "{refused:?}"
    );
    // An HS256 token is not taken without a secret, whatever the JWKS.
    let refused = get_player(
        &mut client,
        "players/me",
        &Signer::hs().sign(&claims("user-rot", "Rot")),
    )
    .await
    .unwrap_err();
    assert_eq!(reason(&refused), "TOKEN_ALGORITHM_NOT_ALLOWED");

    endpoint.set(Answer::Ok(jwks(&[&old])));
    let mut me = None;
    eventually(
        Duration::from_secs(10),
        "the JWKS is read once it is up",
        || {
            let (mut client, token) = (client.clone(), token.clone());
            async move { get_player(&mut client, "players/me", &token).await.is_ok() }
        },
    )
    .await;
    me.get_or_insert(get_player(&mut client, "players/me", &token).await.unwrap());

    // A new key is published: a token naming it passes at once (an unknown kid reads the JWKS
    // again), and the old key goes once it is no longer published.
    endpoint.set(Answer::Ok(jwks(&[&old, &new])));
    let by_new = new.sign(&claims("user-rot", "Rot"));
    eventually(Duration::from_secs(15), "the new key is taken", || {
        let (mut client, token) = (client.clone(), by_new.clone());
        async move { get_player(&mut client, "players/me", &token).await.is_ok() }
    })
    .await;
    assert_eq!(
        get_player(&mut client, "players/me", &by_new)
            .await
            .unwrap(),
        me.clone().unwrap(),
        "the same player, whichever key signed"
    );
    endpoint.set(Answer::Ok(jwks(&[&new])));
    eventually(
        Duration::from_secs(10),
        "the retired key is refused",
        || {
            let (mut client, token) = (client.clone(), token.clone());
            async move {
                get_player(&mut client, "players/me", &token)
                    .await
                    .is_err_and(|s| reason(&s) == "TOKEN_KEY_UNKNOWN")
            }
        },
    )
    .await;

    // The JWKS fails in every way: the last good keys stay in use, and the failures are
    // counted and logged.
    for (what, answer) in [
        ("an error", Answer::Status(500)),
        ("garbage", Answer::Ok("{\"keys\": 42".into())),
        ("no keys", Answer::Ok("{\"keys\": []}".into())),
        (
            "a redirect",
            Answer::Redirect("http://127.0.0.1:1/jwks".into()),
        ),
        ("silence", Answer::Hang),
        (
            "slowness",
            Answer::Slow(Duration::from_secs(8), jwks(&[&new])),
        ),
    ] {
        endpoint.set(answer);
        let before = endpoint.received().len();
        eventually(Duration::from_secs(15), what, || {
            let endpoint = &endpoint;
            async move { endpoint.received().len() > before + 1 }
        })
        .await;
        let me_now = get_player(&mut client, "players/me", &by_new).await;
        assert_eq!(
            me_now.ok(),
            me.clone(),
            "{what}: the last good keys stay in use"
        );
    }
    let text = metrics(server.port).await;
    let failed = text
        .lines()
        .find(|l| l.starts_with(r#"unoflip_sign_in_key_refreshes_total{result="failed"}"#))
        .and_then(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .unwrap_or(0);
    assert!(failed >= 6, "{text}");
    assert!(text.contains("unoflip_sign_in_keys 1"), "{text}");
    assert!(server.log().contains("the last good keys stay in use"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_sign_in_flags_are_refused_at_start_naming_the_flag() {
    let dir = temp_dir("flags");
    std::fs::write(dir.join("garbage.json"), "not a jwks").unwrap();
    let garbage = dir.join("garbage.json").display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "--auth-jwks",
                "/nonexistent/jwks.json",
                "--auth-issuer",
                ISSUER,
                "--auth-audience",
                AUDIENCE,
            ],
            "--auth-jwks /nonexistent/jwks.json",
        ),
        (
            vec![
                "--auth-jwks",
                &garbage,
                "--auth-issuer",
                ISSUER,
                "--auth-audience",
                AUDIENCE,
            ],
            "not a JWKS document",
        ),
        (
            vec![
                "--auth-hs256-secret",
                "short",
                "--auth-issuer",
                ISSUER,
                "--auth-audience",
                AUDIENCE,
            ],
            "--auth-hs256-secret",
        ),
        (
            vec!["--auth-hs256-secret", SECRET],
            "need --auth-issuer and --auth-audience",
        ),
        (
            vec!["--auth-issuer", ISSUER, "--auth-audience", AUDIENCE],
            "need --auth-jwks or --auth-hs256-secret",
        ),
    ];
    for (flags, expected) in cases {
        let out = Command::new(binary())
            .args(["serve", "--listen", "127.0.0.1:0", "--store", "memory"])
            .args(&flags)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flags:?} started");
        assert!(stderr.contains(expected), "{flags:?}: {stderr}");
    }
}

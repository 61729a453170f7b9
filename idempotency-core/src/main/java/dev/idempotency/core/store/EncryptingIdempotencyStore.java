/*
 * Copyright 2026-present the original author or authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package dev.idempotency.core.store;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.StoredResponseCodec;
import dev.idempotency.core.StoredResponseFormatException;
import org.jspecify.annotations.Nullable;

/**
 * A store that encrypts the responses it hands to another store, and decrypts the ones it
 * reads back: encryption at rest for any store, done by the application.
 * <p>
 * The whole response (status, headers and body) is encoded with the
 * {@link StoredResponseCodec} and sealed with AES-GCM under the
 * {@linkplain EncryptionKeyRing#primaryKey() primary key} of an
 * {@link EncryptionKeyRing}, with a fresh 96-bit nonce and, as associated data, the
 * record's scope and key (so a sealed response moved to another record fails
 * authentication). The delegate stores an envelope in its place: status 200, one header
 * {@value #ENVELOPE_HEADER} naming the format and the key id, and a body of nonce
 * followed by ciphertext and tag. The key, the fingerprint, the state and the expiry stay
 * as the delegate keeps them.
 * <p>
 * Reading back, an envelope whose key id the ring does not hold, or whose ciphertext
 * fails authentication (tampered, or sealed for another record), is answered as
 * {@link StoredResponse#unreadable()}: the request did complete, so it is neither run
 * again nor taken for a store failure, and a replay answers a problem. Each such key id
 * is logged once. So is anything else that is not an envelope, since nothing tells an
 * altered record from a genuine one without the seal: a response stored in the clear
 * (before encryption was turned on, or written into the store by someone else), and a
 * record that carries the envelope header but is not an envelope (its status, headers or
 * body altered). An application that turns encryption on over records stored in the
 * clear, and wants them replayed until they expire, says until when with
 * {@link #replayingUnencryptedUntil(Instant)}; once that instant has passed they are
 * answered as unreadable too.
 * <p>
 * The key ring is read on every operation from the supplier given, so an application that
 * fetches its keys from a key management service can rotate them without a restart.
 * Thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class EncryptingIdempotencyStore implements IdempotencyStore {

	/**
	 * Name of the one header of an envelope; its value is {@code v1;key=} followed by the
	 * key id.
	 */
	public static final String ENVELOPE_HEADER = "Idempotency-Encrypted";

	private static final String ENVELOPE_PREFIX = "v1;key=";

	private static final int ENVELOPE_STATUS = 200;

	private static final int NONCE_LENGTH = 12;

	private static final int TAG_BITS = 128;

	private static final String TRANSFORMATION = "AES/GCM/NoPadding";

	private static final Logger logger = Logger.getLogger(EncryptingIdempotencyStore.class.getName());

	// idle ciphers, initialised again for each operation: obtaining a Cipher looks up
	// its provider every time, which cost more than AES-GCM and the codec together on a
	// 1 KiB response (EncryptionBenchmark); pooled, not kept per thread, for virtual
	// threads (CipherPool)
	private static final CipherPool ciphers = new CipherPool(TRANSFORMATION);

	private final IdempotencyStore delegate;

	private final Supplier<EncryptionKeyRing> keyRing;

	private final StoredResponseCodec codec = new StoredResponseCodec();

	private final SecureRandom random = new SecureRandom();

	// until when a response stored in the clear is still replayed; null: never
	private final @Nullable Instant replayUnencryptedUntil;

	private final Clock clock;

	// key ids already logged as unknown or as failing authentication, and the other
	// kinds of record refused
	private final Set<String> reported = ConcurrentHashMap.newKeySet();

	/**
	 * Create an encrypting store with a fixed key ring.
	 * @param delegate the store that holds the records
	 * @param keyRing the keys
	 */
	public EncryptingIdempotencyStore(IdempotencyStore delegate, EncryptionKeyRing keyRing) {
		this(delegate, constant(Objects.requireNonNull(keyRing, "'keyRing' must not be null")));
	}

	/**
	 * Create an encrypting store whose key ring may change.
	 * @param delegate the store that holds the records
	 * @param keyRing the keys, asked on every operation; must not return {@code null}
	 */
	public EncryptingIdempotencyStore(IdempotencyStore delegate, Supplier<EncryptionKeyRing> keyRing) {
		this(delegate, keyRing, null, Clock.systemUTC());
	}

	EncryptingIdempotencyStore(IdempotencyStore delegate, Supplier<EncryptionKeyRing> keyRing,
			@Nullable Instant replayUnencryptedUntil, Clock clock) {
		this.delegate = Objects.requireNonNull(delegate, "'delegate' must not be null");
		this.keyRing = Objects.requireNonNull(keyRing, "'keyRing' must not be null");
		this.replayUnencryptedUntil = replayUnencryptedUntil;
		this.clock = Objects.requireNonNull(clock, "'clock' must not be null");
	}

	/**
	 * Return a store like this one that still replays responses stored in the clear (no
	 * envelope, and no envelope header) until the given instant, and answers them as
	 * unreadable after it. Meant for turning encryption on over a store that already
	 * holds records: pass the moment of the switch plus the longest TTL, and those
	 * records are replayed until they expire. Within the window a response written into
	 * the store in the clear by anyone who can write there is replayed too: leave it out
	 * when no such records exist.
	 * @param until the first instant at which such responses are no longer replayed
	 * @return the new store, on the same delegate and key ring
	 */
	public EncryptingIdempotencyStore replayingUnencryptedUntil(Instant until) {
		Objects.requireNonNull(until, "'until' must not be null");
		return new EncryptingIdempotencyStore(this.delegate, this.keyRing, until, this.clock);
	}

	/**
	 * Return until when a response stored in the clear is still replayed.
	 * @return the instant of {@link #replayingUnencryptedUntil(Instant)}, or empty when
	 * such responses are never replayed
	 */
	public Optional<Instant> getReplayUnencryptedUntil() {
		return Optional.ofNullable(this.replayUnencryptedUntil);
	}

	private static Supplier<EncryptionKeyRing> constant(EncryptionKeyRing keyRing) {
		return () -> keyRing;
	}

	/**
	 * Return the store that holds the (encrypted) records.
	 * @return the store
	 */
	public IdempotencyStore getDelegate() {
		return this.delegate;
	}

	@Override
	public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		AcquireResult result = this.delegate.acquire(key, fingerprint, token, lease, ttl);
		if (result instanceof AcquireResult.Replay replay) {
			StoredResponse opened = open(key, replay.response());
			if (opened != replay.response()) {
				return new AcquireResult.Replay(opened, replay.expiresAt(), replay.timeToLive());
			}
		}
		return result;
	}

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		return this.delegate.complete(key, token, seal(key, response), ttl);
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		return this.delegate.release(key, token);
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		return this.delegate.extend(key, token, lease);
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		return this.delegate.find(key).map((record) -> {
			StoredResponse response = record.response();
			if (response == null) {
				return record;
			}
			StoredResponse opened = open(key, response);
			if (opened == response) {
				return record;
			}
			return new IdempotencyRecord(record.key(), record.fingerprint(), record.status(), record.owner(),
					record.createdAt(), record.leaseExpiresAt(), record.expiresAt(), opened, record.timeToLive());
		});
	}

	@Override
	public boolean evict(IdempotencyKey key) {
		return this.delegate.evict(key);
	}

	@Override
	public String name() {
		return this.delegate.name();
	}

	/**
	 * Return whether a stored response carries the {@value #ENVELOPE_HEADER} header: an
	 * envelope, or what is left of one whose status, headers or body were altered. Such a
	 * response is never replayed as it is.
	 * @param response a response as the delegate holds it
	 * @return {@code true} if any of its headers is named {@value #ENVELOPE_HEADER}
	 */
	public static boolean isSealed(StoredResponse response) {
		for (HttpHeader header : response.headers()) {
			if (header.name().equalsIgnoreCase(ENVELOPE_HEADER)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Return whether a stored response is an envelope that this store writes.
	 * @param response a response as the delegate holds it
	 * @return {@code true} for an envelope
	 */
	public static boolean isEnvelope(StoredResponse response) {
		List<HttpHeader> headers = response.headers();
		return response.status() == ENVELOPE_STATUS && response.isBodyRetained() && headers.size() == 1
				&& headers.get(0).name().equalsIgnoreCase(ENVELOPE_HEADER)
				&& headers.get(0).value().startsWith(ENVELOPE_PREFIX);
	}

	StoredResponse seal(IdempotencyKey key, StoredResponse response) {
		EncryptionKeyRing ring = Objects.requireNonNull(this.keyRing.get(), "the key ring must not be null");
		String keyId = ring.primaryKeyId();
		byte[] plain = this.codec.encode(response);
		if (plain.length > StoredResponseCodec.MAX_BODY_SIZE - NONCE_LENGTH - TAG_BITS / 8) {
			// the envelope would not fit: keep what a response too large to store keeps
			plain = this.codec.encode(StoredResponse.withoutBody(response.status(), response.headers()));
		}
		byte[] nonce = new byte[NONCE_LENGTH];
		this.random.nextBytes(nonce);
		byte[] sealed = new byte[NONCE_LENGTH + plain.length + TAG_BITS / 8];
		System.arraycopy(nonce, 0, sealed, 0, NONCE_LENGTH);
		Cipher cipher = ciphers.acquire();
		try {
			cipher.init(Cipher.ENCRYPT_MODE, ring.primaryKey(), new GCMParameterSpec(TAG_BITS, nonce));
			cipher.updateAAD(associatedData(key, keyId));
			cipher.doFinal(plain, 0, plain.length, sealed, NONCE_LENGTH);
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("Cannot encrypt with key '" + keyId + "'", ex);
		}
		finally {
			ciphers.release(cipher);
		}
		return new StoredResponse(ENVELOPE_STATUS, List.of(new HttpHeader(ENVELOPE_HEADER, ENVELOPE_PREFIX + keyId)),
				sealed);
	}

	StoredResponse open(IdempotencyKey key, StoredResponse stored) {
		if (!stored.isReadable()) {
			return stored;
		}
		if (!isEnvelope(stored)) {
			return notEnvelope(stored);
		}
		String keyId = stored.headers().get(0).value().substring(ENVELOPE_PREFIX.length());
		EncryptionKeyRing ring = Objects.requireNonNull(this.keyRing.get(), "the key ring must not be null");
		SecretKey secretKey = ring.key(keyId);
		if (secretKey == null) {
			reportOnce("unknown:" + keyId, () -> "A stored response is encrypted with key '" + keyId
					+ "', which the key ring does not hold: such records are answered as not replayable");
			return StoredResponse.unreadable();
		}
		byte[] sealed = stored.bodyBytes();
		if (sealed.length < NONCE_LENGTH + TAG_BITS / 8) {
			reportOnce("invalid:" + keyId,
					() -> "A stored response encrypted with key '" + keyId + "' is too short to be valid");
			return StoredResponse.unreadable();
		}
		byte[] plain;
		Cipher cipher = ciphers.acquire();
		try {
			cipher.init(Cipher.DECRYPT_MODE, secretKey, new GCMParameterSpec(TAG_BITS, sealed, 0, NONCE_LENGTH));
			cipher.updateAAD(associatedData(key, keyId));
			plain = cipher.doFinal(sealed, NONCE_LENGTH, sealed.length - NONCE_LENGTH);
		}
		catch (AEADBadTagException ex) {
			reportOnce("invalid:" + keyId, () -> "A stored response encrypted with key '" + keyId
					+ "' failed authentication (altered, or moved from another record): such records are answered"
					+ " as not replayable");
			return StoredResponse.unreadable();
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("Cannot decrypt with key '" + keyId + "'", ex);
		}
		finally {
			ciphers.release(cipher);
		}
		try {
			return this.codec.decode(plain);
		}
		catch (StoredResponseFormatException ex) {
			reportOnce("invalid:" + keyId,
					() -> "A stored response encrypted with key '" + keyId + "' cannot be decoded: " + ex.getMessage());
			return StoredResponse.unreadable();
		}
	}

	// anything but an envelope is replayed only when it is a response stored in the
	// clear within the configured window: an altered envelope never
	private StoredResponse notEnvelope(StoredResponse stored) {
		if (isSealed(stored)) {
			reportOnce("altered-envelope", () -> "A stored response carries the " + ENVELOPE_HEADER
					+ " header but is not an envelope (its status, headers or body were altered): such records are"
					+ " answered as not replayable");
			return StoredResponse.unreadable();
		}
		Instant until = this.replayUnencryptedUntil;
		if (until != null && this.clock.instant().isBefore(until)) {
			return stored;
		}
		reportOnce("unencrypted",
				() -> "A stored response is not encrypted (stored before encryption was turned"
						+ " on, or written into the store by someone else): such records are answered as not replayable"
						+ ((until != null) ? " since " + until
								: "; set idempotency.encryption.replay-unencrypted-until to replay the ones stored"
										+ " before encryption was turned on until they expire"));
		return StoredResponse.unreadable();
	}

	private void reportOnce(String what, Supplier<String> message) {
		if (this.reported.add(what)) {
			logger.log(Level.WARNING, message);
		}
	}

	// the format, the key id and the record's identity: a sealed response
	// only opens for the record and key it was written for
	private static byte[] associatedData(IdempotencyKey key, String keyId) {
		byte[] id = keyId.getBytes(StandardCharsets.US_ASCII);
		byte[] digest = key.digest();
		byte[] data = new byte[2 + id.length + 1 + digest.length];
		data[0] = 'v';
		data[1] = '1';
		System.arraycopy(id, 0, data, 2, id.length);
		data[2 + id.length] = 0;
		System.arraycopy(digest, 0, data, 3 + id.length, digest.length);
		return data;
	}

	@Override
	public String toString() {
		return "EncryptingIdempotencyStore[" + this.delegate + "]";
	}

}

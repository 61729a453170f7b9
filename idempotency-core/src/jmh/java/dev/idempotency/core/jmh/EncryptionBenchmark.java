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

package dev.idempotency.core.jmh;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.EncryptingIdempotencyStore;
import dev.idempotency.core.store.EncryptionKeyRing;
import dev.idempotency.core.store.IdempotencyStore;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of encryption at rest ({@link EncryptingIdempotencyStore}) on a typical JSON API
 * response: sealing it on completion and opening it on a replay, over a store that keeps
 * the last sealed response and does nothing else, so that what is measured is the
 * encryption and its encoding.
 *
 * @author Idempotency contributors
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 4, time = 1)
@Fork(value = 2, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class EncryptionBenchmark {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofHours(24);

	@Param({ "1024", "65536" })
	int bodySize;

	private final IdempotencyKey key = IdempotencyKey.global("benchmark-key");

	private final RequestFingerprint fingerprint = BenchmarkData.fingerprint(1);

	private final OwnerToken token = OwnerToken.generate();

	private LastResponseStore sealed;

	private EncryptingIdempotencyStore store;

	private StoredResponse response;

	@Setup
	public void setUp() {
		this.response = BenchmarkData.response(this.bodySize);
		this.sealed = new LastResponseStore();
		this.store = new EncryptingIdempotencyStore(this.sealed, EncryptionKeyRing.ofBase64("k1",
				Map.of("k1", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")));
		this.store.complete(this.key, this.token, this.response, TTL);
		AcquireResult replay = this.store.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
		if (!(replay instanceof AcquireResult.Replay opened) || !opened.response().equals(this.response)) {
			throw new IllegalStateException("The benchmark response does not round-trip: " + replay);
		}
	}

	@Benchmark
	public boolean seal() {
		return this.store.complete(this.key, this.token, this.response, TTL);
	}

	@Benchmark
	public AcquireResult open() {
		return this.store.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
	}

	/**
	 * Keeps the last response completed and answers every claim with it.
	 */
	static final class LastResponseStore implements IdempotencyStore {

		private volatile StoredResponse last;

		@Override
		public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
				Duration lease, Duration ttl) {
			return new AcquireResult.Replay(this.last, Instant.EPOCH.plus(ttl));
		}

		@Override
		public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
			this.last = response;
			return true;
		}

		@Override
		public boolean release(IdempotencyKey key, OwnerToken token) {
			return true;
		}

		@Override
		public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
			return true;
		}

		@Override
		public Optional<IdempotencyRecord> find(IdempotencyKey key) {
			return Optional.empty();
		}

		@Override
		public boolean evict(IdempotencyKey key) {
			return true;
		}

	}

}

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
import java.util.concurrent.TimeUnit;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Acquisition of keys that the {@link InMemoryIdempotencyStore} does not hold yet, with
 * 1,000, 100,000 and 1,000,000 completed records already stored: {@code acquire} alone, and the
 * whole {@code acquire} then {@code complete} cycle of a first request.
 * <p>
 * Every new key adds a record, so a time-based benchmark would grow the store by
 * millions of records while it measures. Instead each measured shot acquires a batch of
 * {@value FreshKeys#BATCH} keys never used before, and the records of the previous batch
 * are evicted before the next shot, outside the measurement; the store so holds between
 * {@code records} and {@code records + BATCH} records. The score is the time per key.
 *
 * @author Idempotency contributors
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@OperationsPerInvocation(FreshKeys.BATCH)
@Warmup(iterations = FreshKeys.WARMUP_SHOTS)
@Measurement(iterations = FreshKeys.MEASURED_SHOTS)
@Fork(value = 2, jvmArgsAppend = { "-Xms2g", "-Xmx2g" })
@State(Scope.Benchmark)
public class InMemoryStoreFreshKeyBenchmark {

	@Param({ "1000", "100000", "1000000" })
	int records;

	private InMemoryIdempotencyStore store;

	private FreshKeys freshKeys;

	private RequestFingerprint fingerprint;

	private OwnerToken token;

	private StoredResponse response;

	private Duration lease;

	private Duration ttl;

	@Setup(Level.Trial)
	public void setUp() {
		this.lease = Duration.ofSeconds(30);
		this.ttl = Duration.ofHours(24);
		this.store = BenchmarkData.prefilledStore(this.records, this.ttl);
		this.freshKeys = new FreshKeys("fresh");
		this.fingerprint = BenchmarkData.fingerprint(-2L);
		this.token = OwnerToken.generate();
		this.response = BenchmarkData.response(1024);
	}

	@Setup(Level.Iteration)
	public void nextBatch() {
		this.freshKeys.next(this.store);
	}

	@Benchmark
	public void acquireNewKey(Blackhole blackhole) {
		IdempotencyKey[] keys = this.freshKeys.batch();
		for (IdempotencyKey key : keys) {
			blackhole.consume(this.store.acquire(key, this.fingerprint, this.token, this.lease, this.ttl));
		}
	}

	@Benchmark
	public void acquireThenComplete(Blackhole blackhole) {
		IdempotencyKey[] keys = this.freshKeys.batch();
		for (IdempotencyKey key : keys) {
			AcquireResult result = this.store.acquire(key, this.fingerprint, this.token, this.lease, this.ttl);
			blackhole.consume(result);
			blackhole.consume(this.store.complete(key, this.token, this.response, this.ttl));
		}
	}

}

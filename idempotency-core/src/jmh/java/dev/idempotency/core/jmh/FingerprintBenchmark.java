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

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.fingerprint.FingerprintInput;
import dev.idempotency.core.fingerprint.Sha256RequestFingerprinter;
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
 * Cost of {@link Sha256RequestFingerprinter#fingerprint(FingerprintInput)} for JSON
 * bodies of 1 KiB, 16 KiB and 256 KiB: hashed as raw bytes, canonicalised, and
 * canonicalised with two excluded JSON Pointers.
 * <p>
 * The input is built once per trial; {@code fingerprint} leaves the body buffer's
 * position alone, so the same input is fingerprinted again on every call and the
 * measured code allocates only what the fingerprinter itself allocates.
 *
 * @author Idempotency contributors
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 4, time = 1)
@Fork(value = 2, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class FingerprintBenchmark {

	@Param({ "1024", "16384", "262144" })
	int bodySize;

	private FingerprintInput input;

	private Sha256RequestFingerprinter raw;

	private Sha256RequestFingerprinter canonical;

	private Sha256RequestFingerprinter canonicalExcluding;

	@Setup
	public void setUp() {
		byte[] body = BenchmarkData.json(this.bodySize, 7L);
		this.input = input(body);
		this.raw = new Sha256RequestFingerprinter();
		this.raw.setCanonicalizeJson(false);
		this.canonical = new Sha256RequestFingerprinter();
		this.canonicalExcluding = new Sha256RequestFingerprinter();
		this.canonicalExcluding.setExcludedJsonPointers(BenchmarkData.EXCLUDED_POINTERS);
		verify(body);
	}

	/**
	 * Fail the trial unless the document really takes the canonical path: a JSON body
	 * that is not canonicalised would silently fall back to the raw hash and measure the
	 * wrong thing.
	 */
	private void verify(byte[] body) {
		if (!Sha256RequestFingerprinter.isJsonCanonicalizationAvailable()) {
			throw new IllegalStateException("Jackson is not on the class path");
		}
		String text = new String(body, StandardCharsets.UTF_8);
		FingerprintInput reformatted = input((" " + text.replace(", ", ",")).getBytes(StandardCharsets.UTF_8));
		String changedTimestamp = text.replace("2026-03-14T09:26:53.589Z", "2026-03-14T09:27:01.002Z");
		FingerprintInput volatileChanged = input(changedTimestamp.getBytes(StandardCharsets.UTF_8));
		check(!this.raw.fingerprint(this.input).equals(this.raw.fingerprint(reformatted)), "raw sees whitespace");
		check(this.canonical.fingerprint(this.input).equals(this.canonical.fingerprint(reformatted)),
				"canonical form ignores whitespace");
		check(!this.canonical.fingerprint(this.input).equals(this.canonical.fingerprint(volatileChanged)),
				"canonical form sees the timestamp");
		check(this.canonicalExcluding.fingerprint(this.input)
			.equals(this.canonicalExcluding.fingerprint(volatileChanged)), "excluded pointer is ignored");
	}

	private static void check(boolean condition, String what) {
		if (!condition) {
			throw new IllegalStateException("Benchmark input is not what it should be: " + what);
		}
	}

	private static FingerprintInput input(byte[] body) {
		return FingerprintInput.of("POST", "/payments", "expand=customer", BenchmarkData.JSON,
				List.of(new HttpHeader("X-Tenant-Id", "tenant-42")), body, 0, body.length);
	}

	@Benchmark
	public RequestFingerprint raw() {
		return this.raw.fingerprint(this.input);
	}

	@Benchmark
	public RequestFingerprint canonical() {
		return this.canonical.fingerprint(this.input);
	}

	@Benchmark
	public RequestFingerprint canonicalExcluding() {
		return this.canonicalExcluding.fingerprint(this.input);
	}

}

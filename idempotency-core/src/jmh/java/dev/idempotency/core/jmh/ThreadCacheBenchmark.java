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

import java.security.MessageDigest;
import java.util.concurrent.TimeUnit;

import javax.crypto.Cipher;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the library's per-thread state would cost a thread that lives for one request, as
 * a virtual thread does ({@code spring.threads.virtual.enabled=true}): building the JDK
 * object each cache holds. {@code getDigest} is the SHA-256 digest of the key digests
 * ({@code IdempotencyKey.digest()}), {@code getCipher} the AES-GCM cipher of
 * {@code EncryptingIdempotencyStore}, {@code cloneDigest} the other way of making a
 * digest, from a prototype.
 *
 * @author Idempotency contributors
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 4, time = 1)
@Fork(value = 2, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class ThreadCacheBenchmark {

	private MessageDigest prototype;

	@Setup
	public void setUp() throws Exception {
		this.prototype = MessageDigest.getInstance("SHA-256");
	}

	@Benchmark
	public MessageDigest getDigest() throws Exception {
		return MessageDigest.getInstance("SHA-256");
	}

	@Benchmark
	public Object cloneDigest() throws Exception {
		return this.prototype.clone();
	}

	@Benchmark
	public Cipher getCipher() throws Exception {
		return Cipher.getInstance("AES/GCM/NoPadding");
	}

}

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

import java.security.GeneralSecurityException;
import java.util.concurrent.atomic.AtomicReferenceArray;

import javax.crypto.Cipher;

/**
 * The ciphers of {@link EncryptingIdempotencyStore}, kept for reuse by any thread.
 * <p>
 * Obtaining a {@link Cipher} looks its provider up every time: 0.7 µs and 2.5 KB on
 * Temurin 25 ({@code ThreadCacheBenchmark.getCipher}), 3 µs and 4.4 KB on JDK 17, against
 * 1.1 to 1.2 µs for sealing or opening a 1 KiB response with a cipher at hand
 * ({@code EncryptionBenchmark}; docs/benchmarks/virtual-threads.md). A cipher is
 * initialised again, with its key and nonce, at the start of every operation, so any idle
 * one will do. They are pooled rather than kept one per thread: a thread-local cipher
 * would be obtained again on every virtual thread, which lives for one request
 * (docs/virtual-threads.md), and on platform threads the pool costs no more than the
 * thread-local did (the same benchmark, before and after).
 * <p>
 * The pool is lock-free and bounded: a cipher belongs to one thread between
 * {@link #acquire()} and {@link #release(Cipher)}; a miss (every slot empty) obtains a
 * new cipher, and a cipher released into a full pool is left to the garbage collector. A
 * cipher is busy only while it runs, without blocking, so no more are busy at once than
 * there are threads on the cores; twice the cores, at least 4 and at most 64, is room
 * enough.
 *
 * @author Idempotency contributors
 */
final class CipherPool {

	private final String transformation;

	private final AtomicReferenceArray<Cipher> slots;

	/**
	 * Create an empty pool, sized after the processors.
	 * @param transformation the transformation of every cipher, such as
	 * {@code AES/GCM/NoPadding}
	 */
	CipherPool(String transformation) {
		this(transformation, Math.min(64, Math.max(4, Runtime.getRuntime().availableProcessors() * 2)));
	}

	/**
	 * Create an empty pool.
	 * @param transformation the transformation of every cipher
	 * @param size the number of idle ciphers kept at most
	 */
	CipherPool(String transformation, int size) {
		this.transformation = transformation;
		this.slots = new AtomicReferenceArray<>(size);
	}

	/**
	 * Take an idle cipher, or obtain a new one if there is none.
	 * @return a cipher owned by the caller until it is released; not initialised for the
	 * caller's key
	 * @throws IllegalStateException if the JVM offers no cipher of the transformation
	 */
	Cipher acquire() {
		int size = this.slots.length();
		// each thread starts at a slot of its own, so that threads running at once
		// seldom meet, and a platform thread mostly takes back the cipher it released
		int start = start(size);
		for (int i = 0; i < size; i++) {
			int slot = (start + i) % size;
			// a plain read first: a compare-and-swap on an empty slot would only
			// contend with the other threads
			if (this.slots.get(slot) != null) {
				Cipher cipher = this.slots.getAndSet(slot, null);
				if (cipher != null) {
					return cipher;
				}
			}
		}
		try {
			return Cipher.getInstance(this.transformation);
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("This JVM offers no " + this.transformation + " cipher", ex);
		}
	}

	/**
	 * Give a cipher back, whatever state its last operation left it in: the next owner
	 * initialises it again.
	 * @param cipher a cipher of {@link #acquire()}, no longer used by the caller
	 */
	void release(Cipher cipher) {
		int size = this.slots.length();
		int start = start(size);
		for (int i = 0; i < size; i++) {
			if (this.slots.compareAndSet((start + i) % size, null, cipher)) {
				return;
			}
		}
	}

	/**
	 * Return the number of idle ciphers, for tests.
	 * @return the count
	 */
	int idle() {
		int idle = 0;
		for (int i = 0; i < this.slots.length(); i++) {
			idle += (this.slots.get(i) != null) ? 1 : 0;
		}
		return idle;
	}

	private static int start(int size) {
		return (System.identityHashCode(Thread.currentThread()) & Integer.MAX_VALUE) % size;
	}

}
